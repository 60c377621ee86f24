/**
 * A restarted master sits out one sit-out (watchdogTimeout + 25%) before it votes again:
 * that covers every watchdog hold, and an explicit lease no longer than it. A longer
 * lease may outlive the sit-out on the masters that still hold it, so a master that
 * restarted empty could vote for a second owner: the client says so once (a process
 * warning, as the self-deadlock hint is), rather than refuse leases that many setups
 * (persistent masters) run safely.
 */
export class LongLeaseWarning {
  private warned = false;

  constructor(private readonly sitOut: number) {}

  check(name: string, lease: number): void {
    if (this.warned || lease <= this.sitOut) return;
    this.warned = true;
    process.emitWarning(
      `lock '${name}' was asked for a ${lease} ms lease in quorum mode, longer than the ${this.sitOut} ms a restarted master sits out (watchdogTimeout + 25%). ` +
        'A master that restarts empty while such a hold lives may vote for a second owner once it has sat out. ' +
        'Give this client a watchdogTimeout at least as long as its longest lease, or run the masters with persistence. (Once per client.)',
      { type: 'HoldfastWarning', code: 'HOLDFAST_LEASE_OVER_SITOUT' },
    );
  }
}
