/** What the orchestrator hands every scenario. */
import type Redis from 'ioredis';
import type { RedisServer } from '../../spec/kit/servers';
import type { Config } from './config';
import type { BaselineCheckout, ImplDef } from './impls/types';

export interface Env {
  cfg: Config;
  /** Implementations on one master (the floor first), and in quorum mode. */
  impls: ImplDef[];
  quorumImpls: ImplDef[];
  single: RedisServer;
  masters: RedisServer[];
  admin: Redis;
  masterAdmins: Redis[];
  /** --baseline: children load the same checkout. */
  baseline?: BaselineCheckout;
}
