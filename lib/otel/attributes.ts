import type { Attributes } from '@opentelemetry/api';
import type { LockKind } from '../events.js';

/** Attribute keys: bounded values, except NAME (only with `names: true`). */
export const KIND = 'holdfast.lock.kind';
export const NAME = 'holdfast.lock.name';
/** How a wait ended: acquired, timeout, aborted, unavailable, closed, failed. */
export const OUTCOME = 'holdfast.lock.outcome';
/** Why a hold was lost: expired, taken, deleted, quorum. */
export const LOST_REASON = 'holdfast.lock.lost.reason';

/**
 * The attributes of one metric point or span. Without names there are few distinct
 * sets (kind x one more bounded value), so each is made once and shared: recording
 * allocates nothing. With names, each call makes its own.
 */
export class AttributeSets {
  private readonly shared = new Map<string, Attributes>();

  constructor(private readonly names: boolean) {}

  of(kind: LockKind, name: string, key?: string, value?: string): Attributes {
    if (this.names) {
      const attributes: Attributes = { [KIND]: kind, [NAME]: name };
      if (key !== undefined) attributes[key] = value;
      return attributes;
    }
    const id = key === undefined ? kind : `${kind}\0${key}\0${value}`;
    let attributes = this.shared.get(id);
    if (!attributes) {
      attributes = Object.freeze(key === undefined ? { [KIND]: kind } : { [KIND]: kind, [key]: value });
      this.shared.set(id, attributes);
    }
    return attributes;
  }
}
