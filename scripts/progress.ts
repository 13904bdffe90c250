/**
 * A progress bar on stderr (stdout stays for results): rows, rows/s and ETA. In a terminal it redraws in
 * place; otherwise (a log, a CI job) it prints a line a second.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number): void;
  stop(): void;
  /** Rows a second since the start. */
  rate(): number;
  seconds(): number;
}

export function progress(total: number, unit = 'rows'): Progress {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  let done = 0;
  const rate = () => (seconds() > 0 ? done / seconds() : 0);
  const bar = new cliProgress.SingleBar(
    {
      format: `{bar} {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {eta_formatted}`,
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      etaBuffer: 20,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(total, 1), 0, { rate: 0 });
  return {
    update(value) {
      done = value;
      if (value > bar.getTotal()) bar.setTotal(value);
      bar.update(value, { rate: Math.round(rate()) });
    },
    stop: () => bar.stop(),
    rate,
    seconds,
  };
}
