/** The crypt(3) alphabet and its little-endian 24-bit-group encoding, shared by md5-crypt and sha-crypt. */
const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Encodes `digest` taking bytes in the given groups of three (b2, b1, b0); a final short group is padded. */
export function cryptBase64(digest: Buffer, groups: [number, number, number][], tail: { bytes: number[]; chars: number }): string {
  let out = "";
  const emit = (b2: number, b1: number, b0: number, chars: number) => {
    let w = (b2 << 16) | (b1 << 8) | b0;
    for (let i = 0; i < chars; i++) {
      out += ITOA64[w & 0x3f];
      w >>= 6;
    }
  };
  for (const [a, b, c] of groups) emit(digest[a]!, digest[b]!, digest[c]!, 4);
  // A negative index pads: it reads no byte, so 0.
  const [t2 = 0, t1 = 0, t0 = 0] = tail.bytes.map((i) => digest[i] ?? 0);
  emit(t2, t1, t0, tail.chars);
  return out;
}
