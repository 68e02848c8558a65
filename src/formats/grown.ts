/** Typed arrays the readers keep columns in, grown by copying into a longer one. */
export type Column = Int32Array | Uint8Array | Float64Array;

/** A copy of `array` at `length` (longer), its old values first and zeros after. */
export function grown<T extends Column>(array: T, length: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array);
  return bigger;
}
