/** Source of the current time; injected so tests can assert dates and expiry exactly. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
