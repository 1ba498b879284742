import { beforeEach, expect } from "vitest";

/**
 * A test that asserts nothing passes whatever the code does. Every test must make at least one
 * assertion (an `expect`, or `expect.assertions(n)` for exact counts), or it fails.
 */
beforeEach(() => {
  expect.hasAssertions();
});
