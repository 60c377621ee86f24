/**
 * Room for this process's timers to fire late (a busy event loop): the deadline tick
 * that reports `lost` must still run before the server's TTL lets someone else in.
 * Quorum chaos runs on a loaded 2-core machine saw ticks 100+ ms late at lease 800 ms.
 */
export const lagAllowance = (lease: number) => Math.min(50, Math.floor(lease / 10));

/**
 * The client's deadline for a hold ends a little before the server's TTL: the server
 * starts its timer after our send, never before; the margin covers clock drift (1%)
 * and late timers, so `lost` fires before the key can expire for someone else.
 */
export const safety = (lease: number) => Math.floor(lease * 0.01) + 2 + lagAllowance(lease);

/**
 * The client-side deadline of a hold whose server TTL started no earlier than `from`
 * (a monotonic time: the send of the call that set it, or a send known to precede the
 * grant): the lease, or `left` of it when the grant was made before the call (a take-up
 * answers with the PTTL), less the safety margin. The one place this sum is written.
 */
export function heldUntil(from: number, lease: number, left: number = lease): number {
  return from + Math.min(lease, left) - safety(lease);
}
