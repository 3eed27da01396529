// A budget of model tokens per rolling hour, per plugin instance (in memory: a restart starts a
// fresh hour). Spending is recorded from the `usage` of each answer; a request whose estimated
// prompt would overrun what is left is refused before it is sent.

export class BudgetExhaustedError extends Error {
  constructor(readonly limit: number, readonly used: number, readonly wanted: number) {
    super(`ai-proofread: token budget exhausted (${used} of ${limit} tokens used in the last hour, the next request needs about ${wanted}); no request sent`)
    this.name = 'BudgetExhaustedError'
  }
}

const HOUR = 3_600_000

export class TokenBudget {
  private spent: { at: number; tokens: number }[] = []
  private pending = 0

  /** `perHour` 0 means unlimited. */
  constructor(private readonly perHour: number, private readonly now: () => number = Date.now) {}

  used(): number {
    const since = this.now() - HOUR
    while (this.spent.length && this.spent[0]!.at <= since) this.spent.shift()
    return this.spent.reduce((sum, s) => sum + s.tokens, 0)
  }

  /** Tokens the budget could still hold now (unlimited: Infinity). */
  room(): number {
    return this.perHour ? this.perHour - this.used() - this.pending : Infinity
  }

  /**
   * Hold `estimate` tokens for a request about to be sent, counting requests still in flight, so
   * concurrent requests cannot together overrun the budget. Throws BudgetExhaustedError when they
   * would. Call the returned function with the tokens actually used (0 if the request failed).
   */
  reserve(estimate: number): (actual: number) => void {
    if (!this.perHour) return () => {}
    const used = this.used() + this.pending
    if (used + estimate > this.perHour) throw new BudgetExhaustedError(this.perHour, used, estimate)
    this.pending += estimate
    let settled = false
    return (actual) => {
      if (settled) return
      settled = true
      this.pending -= estimate
      if (actual > 0) this.spent.push({ at: this.now(), tokens: actual })
    }
  }
}
