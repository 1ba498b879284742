import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkImportedHash } from "../../src/support/password-verify/check-hash.js";
import { cryptBase64 } from "../../src/support/password-verify/crypt-base64.js";
import { md5Crypt } from "../../src/support/password-verify/md5-crypt.js";
import { shaCrypt } from "../../src/support/password-verify/sha-crypt.js";

// The crypt(3) verifiers called in the test's own thread (the server runs them on a worker thread,
// where a mutation-testing mutant is never active). Every expected string below was made by an
// implementation independent of Gatehouse: `openssl passwd`, passlib, glibc/libxcrypt crypt(3), or
// Ulrich Drepper's SHA-crypt specification (https://www.akkadia.org/drepper/SHA-crypt.txt).

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};
const cryptFixtures = fixtures.hashes.filter((f) => f.scheme.endsWith("-crypt"));

const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Password of exactly `bytes` ASCII bytes, as fed to libxcrypt for the length table below. */
const passwordOf = (bytes: number) => "Tr0ub4dor&3 correct horse battery staple ".repeat(4).slice(0, bytes);

/**
 * crypt(3) of passwordOf(n), by Python's crypt module (libxcrypt), for lengths around the digest
 * block sizes the algorithms loop over: md5 16 bytes, sha256 32, sha512 64.
 */
const byLength: [bytes: number, md5: string, sha256: string, sha512: string][] = [
  [0, "$1$Nf3sQ1Zk$zEWLdgfXldH4dYROeVCXu/", "$5$rounds=1000$saltsaltsaltsalt$HbTHCxL8uy/75gt0om1lfg98CGj2Jn.ziC7pXxHGndC", "$6$rounds=1000$q7T.ds/9xFhA$fYNSUuFdKW75JN8I71dSJZaALaFg/v88LU8Ujr7HJ9q9Nnp7WDsYnpXB6kdxj/.Hx970QmUaePqnsRuArLUNO/"],
  [1, "$1$Nf3sQ1Zk$//k/wutCeocVz0KA546qa0", "$5$rounds=1000$saltsaltsaltsalt$ySi.gyzXP59VDx/xXN4.sRGkQ9kAyEcAVF7JLauwov8", "$6$rounds=1000$q7T.ds/9xFhA$HtYYFhCbh7uv5U20czL3WF8IANIRLoM76nEDVlVajjQN0hSSMdBHpkPbGgBPjxKERM4tJcb4Zl/IkGvqcDkYQ0"],
  [16, "$1$Nf3sQ1Zk$BPOmTcKmmQ3caqiMOWXP..", "$5$rounds=1000$saltsaltsaltsalt$em6VbIW2I7iRjU8eZDMJgIgPrytwawbX1Ceqh6a5ZM/", "$6$rounds=1000$q7T.ds/9xFhA$A6EVaHHVlOhObyz3wHGnu3wZNAZYfZRqr41k0blwdYgG4sXwsPVKnyqV444kiafHd1211XzQDQ06pcIVCR1XF."],
  [17, "$1$Nf3sQ1Zk$n1O7zMBoEIsuJmvA.4CHG0", "$5$rounds=1000$saltsaltsaltsalt$fADrgFyKFs9RxrSJBqmUlsM9BU9WLxsi3kXXHcxJjm8", "$6$rounds=1000$q7T.ds/9xFhA$EkAVwVMhsqVw.tK9YuWeh.RR1Q0iVpYS4PZVcnlxQLgaLioArIJVoHchaYukL6KJVhae.HSO0j0KN2oxVy/zv/"],
  [32, "$1$Nf3sQ1Zk$b5q1FyyK7qG08s6mcg9JI0", "$5$rounds=1000$saltsaltsaltsalt$oOVh0gR254QeDSbrLgdu.Bu5KGM85SowS9YEWjnIjQ6", "$6$rounds=1000$q7T.ds/9xFhA$uj3agwE5wZ6F7ezDpkp.c6umZeYSLgPrfOlYVNp3alW/AZisk/RkypTpQseAQkanpAoo6B20jadItiS1CHj7s."],
  [33, "$1$Nf3sQ1Zk$4KGGMjRCBLrtdnN8gfiTg.", "$5$rounds=1000$saltsaltsaltsalt$GCIbv56x3cNVAI8YFQD9ADp7BfHe4hFaAHog2ymZy6D", "$6$rounds=1000$q7T.ds/9xFhA$kYGQIwQf6fFa11Pd2jOlEnNuIVrueX4uo/781PACr7FBhOvpjypOhn7ohKA/vSLaNScPmRoV4zDgjDRGRjy2E1"],
  [64, "$1$Nf3sQ1Zk$ombk7uko8XD7ruXwS3kNF.", "$5$rounds=1000$saltsaltsaltsalt$TaYbryJB3w/80oZG1rufy.5i.T1bXUrsJJdnzMIujm4", "$6$rounds=1000$q7T.ds/9xFhA$CYOfQHbmoUx7vaah/aM7kS5/qrU4itPibf0qfLDsbN4vRqd0VOMd2I4lbUDoWCytnHEeS.z6N2n6WAsuqC/Oj."],
  [65, "$1$Nf3sQ1Zk$PJ84zp28OybZyh0qx2xEr0", "$5$rounds=1000$saltsaltsaltsalt$MhQInsvyPxyhBEmJP08kifAPP2TOr4Co6fm6tqO/cSB", "$6$rounds=1000$q7T.ds/9xFhA$EMM.FaU4uNafIzJgzfBI8GzYgenfC89PBnZ0cjTNu4cAHbXGdlhdrSSN14eotiQS5vuJl77ZbA7pMClhcpmYD1"],
  [100, "$1$Nf3sQ1Zk$3X69AgBzqMCLq14139L/x.", "$5$rounds=1000$saltsaltsaltsalt$SB7t6zmanyGOEqzrZrCLzs5XDXeDkBPYODCRem.wWr.", "$6$rounds=1000$q7T.ds/9xFhA$HaPw0o41hVxx8jijx3IzZ6BInI2/zQcXzR/IQFWR56IVPNZcgiPXUd6JiRwdER3cnhEbtELXIwn4SXGGOIvJb."],
];

/** crypt(3) of "pw" with salts from empty to the longest each format keeps (libxcrypt). */
const bySalt: [salt: string, md5: string, sha256: string, sha512: string][] = [
  ["", "$1$$F0Fc2lbYpzr3KKdKkM0Wj.", "$5$rounds=1000$$japDxBfHcSVGcyn00bW518Ndv09CHo6WdVnm01mosE2", "$6$$Z7WSO9A8tKGD2oGB9t2ViKdYTIHgnjMZIbdOJElGnO.QoZE5zDsfnF1WHM.IL2KPxhNG4/v/zU9LBcGhxg5Uy."],
  ["a", "$1$a$Slr4opLRbq0iJ7N2AZjfg/", "$5$rounds=1000$a$af1lXdF21.iA9jcmcFwsvY240ve7wL1lH.3Mrww.G/3", "$6$a$nvOPw7CPhYOWhlLySx0/bwHKZLqSFBh.pO4PJXAC7jDpnKA8fOKYrlaGrG585p0Eg/RZ3zubvd1hUfMR83Q980"],
  ["abcdefgh", "$1$abcdefgh$IQtUouv7y7Q9dRWkQEPCc.", "$5$rounds=1000$abcdefgh$ggW8Ynp0m1BgJIXoc8pRCAiEP.uCk5kdN89CuGUnta.", "$6$abcdefgh$KQeXafAQAaOoKTevphVU215RvJdgzyfASRasIOuh12hO8u0r1bGW92ZnTmC9IjsiQ8VPiTXBiZF49dFL1U4wX/"],
];
// with "pw" in libxcrypt the 16-character salt (the longest sha-crypt keeps; md5-crypt keeps 8)
const sixteenCharSalt = {
  sha256: "$5$rounds=1000$abcdefghijklmnop$.xdzFsvAcQZWCCNS9v/3W0mYnzyVPxn.vUXmXqFlo50",
  sha512: "$6$abcdefghijklmnop$GRSTFj3H0pZ9BY1uhdqITG.qORbXkTk40qgaa1roNICfs/axSgdNnbKEYghuyLnrmnFXvSE09GdxJbCDOnxdc1",
};

/** The checksum after the last "$", as md5Crypt/shaCrypt return it. */
const checksumOf = (hash: string) => hash.slice(hash.lastIndexOf("$") + 1);
const utf8 = (text: string) => Buffer.from(text, "utf8");

describe("crypt base64 (the alphabet and byte order md5-crypt and sha-crypt share)", () => {
  it("writes 6-bit values with the alphabet ./0-9A-Za-z, in that order", () => {
    // One byte in the tail's low position, one character out: the value picks the character.
    const encoded = Array.from({ length: 64 }, (_, value) => cryptBase64(Buffer.from([value]), [], { bytes: [-1, -1, 0], chars: 1 }));
    expect(encoded.join("")).toBe(ITOA64);
  });

  it("takes each group as b2·2¹⁶ + b1·2⁸ + b0 and writes four characters, least significant first", () => {
    // 0x123456 → 6-bit digits from the low end: 0x16, 0x11, 0x23, 0x04.
    const digest = Buffer.from([0x12, 0x34, 0x56]);
    expect(cryptBase64(digest, [[0, 1, 2]], { bytes: [], chars: 0 })).toBe(ITOA64[0x16]! + ITOA64[0x11]! + ITOA64[0x23]! + ITOA64[0x04]!);
    // The group names the byte positions: reversed positions give another number.
    expect(cryptBase64(digest, [[2, 1, 0]], { bytes: [], chars: 0 })).toBe(ITOA64[0x12]! + ITOA64[0x10]! + ITOA64[0x23]! + ITOA64[0x15]!);
  });

  it("pads a short final group with zero bytes where its position is -1, and writes only `chars` characters of it", () => {
    const digest = Buffer.from([0xff, 0x01]);
    // tail (pad, 0xff, 0x01) = 0x00ff01 → 0x01, 0x3c, 0x0f, 0x00; three characters kept.
    expect(cryptBase64(digest, [], { bytes: [-1, 0, 1], chars: 3 })).toBe(ITOA64[0x01]! + ITOA64[0x3c]! + ITOA64[0x0f]!);
    expect(cryptBase64(digest, [], { bytes: [-1, -1, 1], chars: 2 })).toBe("/.");
  });
});

describe("sha256-crypt and sha512-crypt, checked in this thread", () => {
  it("match the test vectors of Drepper's specification (default 5000 rounds, salt cut to 16, explicit rounds)", () => {
    expect(shaCrypt("sha256", utf8("Hello world!"), "saltstring", 5000)).toBe("5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5");
    expect(shaCrypt("sha512", utf8("Hello world!"), "saltstring", 5000)).toBe("svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1");
    expect(shaCrypt("sha256", utf8("Hello world!"), "saltstringsaltst", 10000)).toBe("3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA");
    // The spec's "$5$rounds=5000$toolongsaltstring": crypt keeps the first 16 salt characters.
    expect(checkImportedHash("$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5", "This is just a test")).toBe(true);
    const longText = "a very much longer text to encrypt.  This one even stretches over morethan one line.";
    expect(checkImportedHash("$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1", longText)).toBe(true);
  });

  it.each(byLength)("verify a %i-byte password around the digest block sizes, and refuse it one byte shorter", (bytes, _md5, sha256, sha512) => {
    for (const hash of [sha256, sha512]) {
      expect(checkImportedHash(hash, passwordOf(bytes))).toBe(true);
      expect(checkImportedHash(hash, bytes === 0 ? "T" : passwordOf(bytes - 1))).toBe(false);
    }
  });

  it.each(bySalt)("verify with the salt %j (empty up to 8 characters)", (salt, _md5, sha256, sha512) => {
    expect(shaCrypt("sha256", utf8("pw"), salt, 1000)).toBe(checksumOf(sha256));
    expect(shaCrypt("sha512", utf8("pw"), salt, 5000)).toBe(checksumOf(sha512));
  });

  it("verify with a 16-character salt, the longest the format keeps", () => {
    expect(checkImportedHash(sixteenCharSalt.sha256, "pw")).toBe(true);
    expect(checkImportedHash(sixteenCharSalt.sha512, "pw")).toBe(true);
  });

  it("use 5000 rounds when the hash names none, and exactly the named count otherwise", () => {
    // libxcrypt writes the same checksum for "$5$abc$" and "$5$rounds=5000$abc$".
    const checksum = "/LKlXd6vuvdFX3oWbf2vGk3DgflzzsvOtMZsiOxqqY5";
    expect(checkImportedHash(`$5$abc$${checksum}`, "pw")).toBe(true);
    expect(checkImportedHash(`$5$rounds=5000$abc$${checksum}`, "pw")).toBe(true);
    expect(checkImportedHash(`$5$rounds=5001$abc$${checksum}`, "pw")).toBe(false);
    expect(checkImportedHash(`$5$rounds=4999$abc$${checksum}`, "pw")).toBe(false);
  });

  it("accept the minimum of 1000 rounds and refuse 999 as malformed, as libxcrypt refuses it", () => {
    expect(checkImportedHash(byLength[1]![2], passwordOf(1))).toBe(true);
    expect(() => checkImportedHash(byLength[1]![2].replace("rounds=1000", "rounds=999"), passwordOf(1))).toThrow(
      expect.objectContaining({ kind: "invalid_argument", reason: "hashed_password.malformed" }),
    );
  });
});

describe("md5-crypt, checked in this thread", () => {
  it.each(byLength)("verifies a %i-byte password around its 16-byte block, and refuses it one byte shorter", (bytes, md5) => {
    expect(checkImportedHash(md5, passwordOf(bytes))).toBe(true);
    expect(checkImportedHash(md5, bytes === 0 ? "T" : passwordOf(bytes - 1))).toBe(false);
  });

  it.each(bySalt)("verifies with the salt %j (empty up to the 8 characters it keeps)", (salt, md5) => {
    expect(md5Crypt(utf8("pw"), salt)).toBe(checksumOf(md5));
  });

  it("refuses a salt over 8 characters as malformed: crypt(3) never writes one", () => {
    expect(() => checkImportedHash("$1$abcdefghi$IQtUouv7y7Q9dRWkQEPCc.", "pw")).toThrow(expect.objectContaining({ reason: "hashed_password.malformed" }));
  });
});

describe("the crypt fixtures of openssl and passlib, checked in this thread", () => {
  it.each(cryptFixtures.map((f) => [`${f.scheme} (${f.source}) ${f.hash.slice(0, 20)}…`, f.hash] as const))("%s: verifies the password, refuses others", (_name, hash) => {
    expect(checkImportedHash(hash, fixtures.password)).toBe(true);
    expect(checkImportedHash(hash, `${fixtures.password}x`)).toBe(false);
    expect(checkImportedHash(hash, fixtures.password.slice(0, -1))).toBe(false);
    expect(checkImportedHash(hash, "")).toBe(false);
  });
});
