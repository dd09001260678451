package io.betree.compression;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Deterministic test data: compressible text, random bytes and mixtures of both. */
public final class TestInputs {

    /** Size of the large-input case. */
    public static final int LARGE = 16 << 20;

    private static final String[] WORDS = {
        "tree", "buffer", "message", "flush", "node", "pivot", "epsilon", "leaf", "insert", "delete",
        "upsert", "range", "query", "checkpoint", "log", "page", "block", "cache", "compaction", "key",
    };

    private static byte[] large;

    private TestInputs() {
    }

    /** {@code n} random bytes from {@code seed}. */
    public static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** {@code n} bytes of word soup with numbers: compresses well with every real codec. */
    public static byte[] text(int n, long seed) {
        Random rnd = new Random(seed);
        StringBuilder sb = new StringBuilder(n + 32);
        while (sb.length() < n) {
            sb.append(WORDS[rnd.nextInt(WORDS.length)]).append(rnd.nextInt(100)).append(' ');
        }
        return sb.substring(0, n).getBytes(StandardCharsets.US_ASCII);
    }

    /** Alternating runs of text, random bytes and zeros. */
    public static byte[] mixed(int n, long seed) {
        Random rnd = new Random(seed);
        byte[] b = new byte[n];
        int pos = 0;
        while (pos < n) {
            int run = Math.min(n - pos, 1 + rnd.nextInt(64 * 1024));
            int kind = rnd.nextInt(3);
            byte[] part = kind == 0 ? text(run, rnd.nextLong()) : kind == 1 ? random(run, rnd.nextLong()) : new byte[run];
            System.arraycopy(part, 0, b, pos, run);
            pos += run;
        }
        return b;
    }

    /** The shared 16 MiB mixed input; callers must not modify it. */
    public static synchronized byte[] large() {
        if (large == null) {
            large = mixed(LARGE, 16);
        }
        return large;
    }
}
