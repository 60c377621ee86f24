/**
 * Every implementation the bench knows, by id, on one master and in quorum mode; with
 * --baseline each holdfast implementation gets a twin from the baseline checkout, listed
 * right after it so the two alternate as neighbours in every round.
 */
import { CONTRACT_FLOOR } from './contract-floor';
import { CONTRACT_HANDOFF } from './contract-handoff';
import { loadHoldfast } from './holdfast-module';
import { openHoldfast } from './holdfast';
import { openRedisson } from './node-redisson';
import { openRaw } from './raw';
import { openSemaphore } from './redis-semaphore';
import { openRedlock } from './redlock';
import type { BaselineCheckout, Family, ImplDef } from './types';

/** A holdfast version the watchdog scenario can load by id. */
export interface HoldfastVariant {
  id: string;
  label: string;
  /** Checkout root; undefined for the working tree. */
  root?: string;
  keyPrefix: string;
}

export interface Registry {
  single: ImplDef[];
  quorum: ImplDef[];
  /** holdfast first, then its baseline twin when there is one. */
  holdfastVariants: HoldfastVariant[];
  byId(id: string): ImplDef;
  variantById(id: string): HoldfastVariant;
}

/** Names of the baseline's keys start with this (see HoldfastOptions.keyPrefix). */
const BASELINE_KEY_PREFIX = 'base:';

function holdfastImpl(id: string, label: string, family: Family, variant: HoldfastVariant, fair: boolean, twinOf?: string): ImplDef {
  return {
    id,
    label,
    family,
    twinOf,
    open: (ports) => openHoldfast(loadHoldfast(variant.root), ports, { fair, keyPrefix: variant.keyPrefix, tag: variant.id }),
  };
}

/** holdfast of the working tree on node-redis clients: the same run compares the two adapters. */
function nodeRedisImpl(id: string, label: string, variant: HoldfastVariant): ImplDef {
  const open = (ports: number[]) => openHoldfast(loadHoldfast(variant.root), ports, { fair: false, keyPrefix: 'nr:', tag: id, client: 'node-redis' });
  return { id, label, family: 'holdfast-node-redis', countsCommands: false, open };
}

export function buildRegistry(baseline?: BaselineCheckout): Registry {
  const hf: HoldfastVariant = { id: 'holdfast', label: 'holdfast', keyPrefix: '' };
  const base: HoldfastVariant | undefined = baseline && {
    id: `holdfast@${baseline.ref}`,
    label: `holdfast@${baseline.ref} (${baseline.commit.slice(0, 9)})`,
    root: baseline.dir,
    keyPrefix: BASELINE_KEY_PREFIX,
  };
  const single: ImplDef[] = [
    { id: 'raw', label: 'raw floor (holdfast Lua via evalsha)', family: 'raw', open: openRaw },
    holdfastImpl('holdfast', 'holdfast', 'holdfast', hf, false),
    ...(base ? [holdfastImpl(base.id, base.label, 'holdfast-baseline', base, false, 'holdfast')] : []),
    nodeRedisImpl('holdfast-node-redis', 'holdfast on node-redis 6', hf),
    holdfastImpl('holdfast-fair', 'holdfast fair lock', 'holdfast-fair', hf, true),
    ...(base ? [holdfastImpl(`holdfast-fair@${baseline!.ref}`, `holdfast@${baseline!.ref} fair lock`, 'holdfast-fair-baseline', base, true, 'holdfast-fair')] : []),
    { id: 'redlock', label: 'redlock 5.0.0-beta.2', family: 'redlock', open: openRedlock },
    { id: 'redis-semaphore', label: 'redis-semaphore Mutex', family: 'redis-semaphore', open: openSemaphore },
    { id: 'node-redisson', label: 'node-redisson', family: 'node-redisson', open: openRedisson },
  ];
  const quorum: ImplDef[] = [
    { id: 'raw-quorum', label: 'raw quorum (3 masters, Promise.all)', family: 'raw', open: openRaw },
    holdfastImpl('holdfast-quorum', 'holdfast quorum (3 masters)', 'holdfast', hf, false),
    ...(base ? [holdfastImpl(`${base.id}-quorum`, `${base.label} quorum (3 masters)`, 'holdfast-baseline', base, false, 'holdfast-quorum')] : []),
    nodeRedisImpl('holdfast-node-redis-quorum', 'holdfast quorum on node-redis 6 (3 masters)', hf),
    { id: 'redlock-3', label: 'redlock, 3 clients', family: 'redlock', open: openRedlock },
    { id: 'redis-semaphore-redlock', label: 'redis-semaphore RedlockMutex (3)', family: 'redis-semaphore', open: openSemaphore },
  ];
  const variants = base ? [hf, base] : [hf];
  return {
    single,
    quorum,
    holdfastVariants: variants,
    byId(id) {
      const impl = [...single, ...quorum, CONTRACT_FLOOR, CONTRACT_HANDOFF].find((i) => i.id === id);
      if (!impl) throw new Error(`unknown implementation ${id}`);
      return impl;
    },
    variantById(id) {
      const variant = variants.find((v) => v.id === id);
      if (!variant) throw new Error(`unknown holdfast version ${id}`);
      return variant;
    },
  };
}

/** Does `filter` (ids or families, from --impl) name this working-tree implementation? */
function named(impl: ImplDef, filter: Set<string>): boolean {
  return filter.has(impl.id) || filter.has(impl.family);
}

/** The floor always; the rest when --impl names them (or no --impl); a baseline twin with its twin. */
export function selectImpls(impls: ImplDef[], filter: Set<string> | undefined): ImplDef[] {
  return impls.filter((i) => {
    if (i.family === 'raw' || !filter) return true;
    const twin = i.twinOf === undefined ? i : impls.find((t) => t.id === i.twinOf);
    return twin !== undefined && named(twin, filter);
  });
}

/**
 * The order of one round. An implementation measured right after another pays for what
 * that one left behind (garbage, timers, a cold cache), by up to ~15% in workers16 on
 * a 2-core machine. So a baseline twin swaps places with its twin in every even round:
 * over an even number of rounds each holdfast version runs first equally often, and
 * the position effect cancels out of their comparison. Others keep their places.
 */
export function inRoundOrder(impls: ImplDef[], round: number): ImplDef[] {
  if (round % 2 === 1) return impls;
  const out = [...impls];
  for (let i = 1; i < out.length; i++) {
    if (out[i].twinOf !== undefined && out[i - 1].id === out[i].twinOf) [out[i - 1], out[i]] = [out[i], out[i - 1]];
  }
  return out;
}
