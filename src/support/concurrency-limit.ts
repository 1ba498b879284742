/**
 * Runs at most `size` of the tasks handed to it at once; the others wait, first come first served. A finished task
 * hands its slot straight to the next waiting one, so a task arriving meanwhile cannot take it: never more than `size`.
 */
export function createConcurrencyLimit(size: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(task: () => Promise<T>): Promise<T> {
    if (running < size) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
