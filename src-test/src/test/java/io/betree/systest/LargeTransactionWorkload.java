package io.betree.systest;

import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.Transaction;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Child-JVM program of {@link LargeTransactionTest}: one transaction of {@code args[1]} puts (8-byte
 * keys in scrambled order, the row number as value) in the environment {@code args[0]}, committed
 * with {@link Durability#SYNC} under whatever heap the JVM was given. It checks a sample of its own
 * writes before committing, prints {@code COMMITTED <seconds>}, {@code PEAK_HEAP_BYTES} and
 * {@code SAMPLE_OK}, then halts without closing: the parent's reopen recovers the commit from the
 * log.
 */
public final class LargeTransactionWorkload {
    private LargeTransactionWorkload() {
    }

    static byte[] key(long row) {
        return ByteBuffer.allocate(8).putLong(OffHeapWorkload.mix(row)).array();
    }

    static byte[] value(long row) {
        return ByteBuffer.allocate(8).putLong(row).array();
    }

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        long rows = Long.parseLong(args[1]);
        long start = System.nanoTime();
        try {
            Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20)
                    .durability(Durability.SYNC));
            Index index = env.openIndex("rows");
            int sampleOk = 0;
            try (Transaction txn = env.begin()) {
                for (long row = 0; row < rows; row++) {
                    index.put(txn, key(row), value(row));
                    if (row % 1_000_000 == 999_999) {
                        System.out.printf(Locale.ROOT, "PROGRESS %d writes, %.1f s, heap %d MiB%n", row + 1,
                                (System.nanoTime() - start) / 1e9, OffHeapWorkload.usedHeap() >> 20);
                    }
                }
                for (long row = 0; row < rows; row += rows / 1000) {
                    if (Arrays.equals(value(row), index.get(txn, key(row)))) {
                        sampleOk++;
                    }
                }
                long commitStart = System.nanoTime();
                txn.commit();
                System.out.printf(Locale.ROOT, "COMMIT_SECONDS %.1f%n", (System.nanoTime() - commitStart) / 1e9);
            }
            System.out.printf(Locale.ROOT, "COMMITTED %.1f%n", (System.nanoTime() - start) / 1e9);
            System.out.println("SAMPLE_OK " + sampleOk);
            System.out.println("PEAK_HEAP_BYTES " + OffHeapWorkload.peakHeap());
            System.out.flush();
            Runtime.getRuntime().halt(0); // no close, no checkpoint: recovery replays the commit
        } catch (Throwable t) {
            System.out.println("FAILED " + t);
            t.printStackTrace();
            System.out.flush();
            Runtime.getRuntime().halt(1);
        }
    }
}
