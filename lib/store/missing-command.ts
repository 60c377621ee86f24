/**
 * Whether `error` is a refusal of a command the server does not have (renamed away,
 * disabled by a managed service, unknown to a proxy; ioredis-mock's "Unsupported
 * command"): no retry can change that answer.
 */
export function isMissingCommand(error: unknown): boolean {
  return error instanceof Error && /\b(unknown|unsupported) command\b/i.test(error.message);
}
