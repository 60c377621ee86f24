// Bad usage: main() prints the message and exits EXIT_USAGE, before touching Redis.
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
