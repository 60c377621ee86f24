/**
 * The stable `code` of every holdfast error: match on it rather than on messages,
 * which may change. One code per class; a subclass has its own code and still passes
 * `instanceof` for its parents.
 */
export type LockErrorCode =
  | 'HOLDFAST_LOCK_ERROR'
  | 'HOLDFAST_NOT_HELD'
  | 'HOLDFAST_LOCK_LOST'
  | 'HOLDFAST_WAIT_TIMEOUT'
  | 'HOLDFAST_UNAVAILABLE'
  | 'HOLDFAST_NO_QUORUM'
  | 'HOLDFAST_COMMAND_TIMEOUT'
  | 'HOLDFAST_REPLICA_SYNC'
  | 'HOLDFAST_REVOKED';
