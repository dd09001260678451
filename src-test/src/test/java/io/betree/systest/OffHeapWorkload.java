package io.betree.systest;

import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.internal.memory.NativeHeapTrimmer;
import io.betree.internal.memory.NodeMemory;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Child-JVM program for {@link OffHeapMemoryTest}: stores many rows with a cache far larger than the
 * heap, checkpoints, checks a sample with gets, counts everything with a scan, closes, and prints
 * {@code NAME value} lines: ROWS_WRITTEN, ROWS_SCANNED, SAMPLE_OK, WRITE_SECONDS, WRITE_ROWS_PER_SECOND,
 * SCAN_SECONDS, PEAK_HEAP_BYTES, MAX_HEAP_BYTES, OFF_HEAP_BYTES, PEAK_DIRECT_BYTES, PEAK_RSS_BYTES (the
 * process's peak resident size, {@code VmHWM}, -1 where {@code /proc} does not tell), GC_COUNT, GC_MILLIS,
 * CACHE and DONE; on a failure FAILED and REOPEN_AFTER_FAILURE (whether the directory can be opened
 * again in the same JVM), then exit code 1.
 *
 * <p>Arguments: directory, {@code random} or {@code sequential}, row count, cache bytes.
 */
public final class OffHeapWorkload {
    static final int VALUE_BYTES = 100;
    static final long SEED = 0x0FF4EAB1L;

    private OffHeapWorkload() {
    }

    /** A bijection on longs (splitmix64's finalizer): distinct rows get distinct, scattered keys. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static long keyOf(long row, boolean random) {
        return random ? mix(row + SEED) : row;
    }

    /** 100 bytes derived from the key: the key, then a half-compressible pattern. */
    static byte[] valueOf(long key) {
        byte[] v = new byte[VALUE_BYTES];
        ByteBuffer b = ByteBuffer.wrap(v);
        b.putLong(key);
        long x = key;
        while (b.remaining() >= 8) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            b.putLong(b.position() % 16 == 0 ? x : key);
        }
        while (b.hasRemaining()) {
            b.put((byte) x);
        }
        return v;
    }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            // Report, then show what the failure left behind: can the directory be opened again?
            System.out.println("FAILED " + t);
            t.printStackTrace();
            try (Environment env = Environment.open(Path.of(args[0]),
                    EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(EnvironmentOptions.MIN_CACHE_BYTES))) {
                System.out.println("REOPEN_AFTER_FAILURE ok, indexes " + env.indexNames());
            } catch (Throwable again) {
                System.out.println("REOPEN_AFTER_FAILURE " + again);
            }
            System.exit(1);
        }
    }

    static void run(String[] args) {
        Path dir = Path.of(args[0]);
        boolean random = args[1].equals("random");
        long rows = Long.parseLong(args[2]);
        long cache = Long.parseLong(args[3]);
        DirectPeak direct = new DirectPeak();
        direct.start();
        long written;
        long scanned = 0;
        long start = System.nanoTime();
        double writeSeconds;
        double scanSeconds;
        long offHeap;
        String stats;
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(cache))) {
            Index index = env.openIndex("rows");
            byte[] key = new byte[8];
            ByteBuffer kb = ByteBuffer.wrap(key);
            for (written = 0; written < rows; written++) {
                long k = keyOf(written, random);
                kb.putLong(0, k);
                index.put(key, valueOf(k));
                if (written % 500_000 == 0 && written > 0) {
                    System.out.printf(Locale.ROOT,
                            "PROGRESS %d rows, %.1f s, off-heap %d MiB, direct peak %d MiB, heap %d MiB%n", written,
                            (System.nanoTime() - start) / 1e9, env.offHeapBytes() >> 20, direct.peak >> 20,
                            usedHeap() >> 20);
                }
            }
            env.checkpoint();
            writeSeconds = (System.nanoTime() - start) / 1e9;

            int sampleOk = 0;
            java.util.Random pick = new java.util.Random(SEED);
            for (int i = 0; i < 10_000; i++) {
                long row = Math.floorMod(pick.nextLong(), rows);
                long k = keyOf(row, random);
                kb.putLong(0, k);
                if (Arrays.equals(index.get(key), valueOf(k))) {
                    sampleOk++;
                }
            }
            kb.putLong(0, random ? keyOf(rows, true) : rows); // a key that was never written
            if (index.get(key) == null) {
                sampleOk++;
            }
            System.out.println("SAMPLE_OK " + sampleOk + " of 10001");

            long scanStart = System.nanoTime();
            byte[] previous = null;
            try (Cursor c = index.scan()) {
                while (c.next()) {
                    byte[] k = c.key();
                    if (previous != null && Arrays.compareUnsigned(previous, k) >= 0) {
                        throw new AssertionError("scan out of order at row " + scanned);
                    }
                    if (scanned % 97 == 0 && !Arrays.equals(c.value(), valueOf(ByteBuffer.wrap(k).getLong()))) {
                        throw new AssertionError("wrong value at row " + scanned);
                    }
                    previous = k;
                    scanned++;
                }
            }
            scanSeconds = (System.nanoTime() - scanStart) / 1e9;
            offHeap = env.offHeapBytes();
            stats = env.cacheStats().toString();
        }
        direct.stop = true;
        System.out.println("ROWS_WRITTEN " + written);
        System.out.println("ROWS_SCANNED " + scanned);
        System.out.printf(Locale.ROOT, "WRITE_SECONDS %.2f%n", writeSeconds);
        System.out.printf(Locale.ROOT, "WRITE_ROWS_PER_SECOND %.0f%n", written / writeSeconds);
        System.out.printf(Locale.ROOT, "SCAN_SECONDS %.2f%n", scanSeconds);
        System.out.println("PEAK_HEAP_BYTES " + peakHeap());
        System.out.println("MAX_HEAP_BYTES " + Runtime.getRuntime().maxMemory());
        System.out.println("OFF_HEAP_BYTES " + offHeap);
        System.out.println("PEAK_DIRECT_BYTES " + direct.peak);
        System.out.println("PEAK_NIO_DIRECT_BYTES " + direct.peakNio);
        System.out.println("PEAK_NETTY_DIRECT_BYTES " + direct.peakNetty);
        System.out.println("PEAK_POOL_BYTES " + direct.peakPool);
        System.out.println("PEAK_RSS_BYTES " + NativeHeapTrimmer.peakResidentBytes());
        System.out.println("HEAP_TRIMS " + NativeHeapTrimmer.trims() + " in "
                + NativeHeapTrimmer.trimNanos() / 1_000_000 + " ms");
        long gcCount = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        System.out.println("GC_COUNT " + gcCount);
        System.out.println("GC_MILLIS " + gcMillis);
        System.out.println("CACHE " + stats);
        System.out.println("DONE");
    }

    /** Sum of the peak usage of every heap pool: an upper bound of the peak heap in use. */
    static long peakHeap() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    static long usedHeap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * Samples NIO direct memory, Netty's own direct-memory counter and the node pool's chunks every
     * 50 ms.
     */
    static final class DirectPeak extends Thread {
        volatile boolean stop;
        volatile long peak;
        volatile long peakNio;
        volatile long peakNetty;
        volatile long peakPool;

        DirectPeak() {
            super("direct-memory-sampler");
            setDaemon(true);
        }

        @Override
        public void run() {
            while (!stop) {
                long nio = 0;
                for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
                    if (pool.getName().equals("direct")) {
                        nio += pool.getMemoryUsed();
                    }
                }
                // Netty counts what it allocates without a Cleaner (not in the NIO pool); -1 when it
                // allocates through ByteBuffer.allocateDirect, which the NIO pool counts. Both may count the same
                // chunks, so the larger of the two is the figure.
                long netty = io.netty.util.internal.PlatformDependent.usedDirectMemory();
                peakNio = Math.max(peakNio, nio);
                peakNetty = Math.max(peakNetty, netty);
                peak = Math.max(peak, Math.max(nio, netty));
                peakPool = Math.max(peakPool, NodeMemory.poolBytes());
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}
