/**
 * How long a request spent in each stage, for a host's Server-Timing header; measured only when
 * the host asks (`handle(..., { timings: true })`).
 */
export const STAGES = ['parse', 'plan', 'compile', 'db', 'respond'] as const;
export type Stage = (typeof STAGES)[number];
/** Milliseconds by stage. */
export type Timings = Record<Stage, number>;

/** Attributes the time since the previous lap to a stage. */
export class StageClock {
  readonly timings: Timings = { parse: 0, plan: 0, compile: 0, db: 0, respond: 0 };
  #last = performance.now();

  lap(stage: Stage): void {
    const now = performance.now();
    this.timings[stage] += now - this.#last;
    this.#last = now;
  }
}
