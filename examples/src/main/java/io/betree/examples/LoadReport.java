package io.betree.examples;

import io.betree.Codec;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Loads rows with random keys into a fresh environment once per codec and prints the insert rate,
 * the bytes on disk per row and the peak Java heap. A quick figure, not a benchmark: the JMH suite
 * in {@code jmh-benchmarks} is where engines are compared.
 *
 * <p>Rows are written without transactions under {@link Durability#NONE}: logged, synced at
 * checkpoints, as a bulk load would be.
 *
 * <p>Arguments: {@code [rows] [codec,codec,...] [directory]}; defaults 1,000,000 rows, all codecs,
 * {@code target/load-report}. Keys are 16 random bytes; values are 100 bytes of order-like text
 * (a customer id, an amount, a status word and padding), so they compress as real rows do.
 */
public final class LoadReport {
    private LoadReport() {
    }

    public static void main(String[] args) throws IOException {
        int rows = args.length > 0 ? Integer.parseInt(args[0].replace("_", "")) : 1_000_000;
        List<Codec> codecs = new ArrayList<>();
        if (args.length > 1) {
            for (String name : args[1].split(",")) {
                codecs.add(Codec.byName(name.trim()));
            }
        } else {
            codecs.addAll(List.of(Codec.NONE, Codec.LZ4, Codec.ZSTD, Codec.XZ, Codec.DEFLATE));
        }
        Path base = Path.of(args.length > 2 ? args[2] : "target/load-report");
        System.out.printf("%-8s %10s %12s %12s %14s %12s%n", "codec", "rows", "rows/s", "bytes/row", "raw bytes/row",
                "peak heap MiB");
        for (Codec codec : codecs) {
            Path dir = base.resolve(codec.algorithm());
            deleteTree(dir);
            resetHeapPeaks();
            SplittableRandom rnd = new SplittableRandom(42);
            byte[] key = new byte[16];
            byte[] value = new byte[100];
            long start = System.nanoTime();
            try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20).durability(Durability.NONE))) {
                Index idx = env.openIndex("rows", shape().codec(codec));
                for (int i = 0; i < rows; i++) {
                    fillKey(rnd, key);
                    fillValue(rnd, i, value);
                    idx.put(key, value);
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long bytes = Files.size(dir.resolve("betree.data"));
            System.out.printf("%-8s %10d %12.0f %12.1f %14d %12.1f%n", codec.algorithm(), rows, rows / seconds,
                    (double) bytes / rows, key.length + value.length, peakHeap() / 1048576.0);
        }
    }

    /** The default index shape, or the one given by -Dnode, -Dbasement and -Dfanout (bytes, bytes, count). */
    private static IndexOptions shape() {
        IndexOptions o = IndexOptions.defaults();
        if (System.getProperty("node") != null) {
            o = o.nodeSize(Integer.getInteger("node"));
        }
        if (System.getProperty("basement") != null) {
            o = o.basementSize(Integer.getInteger("basement"));
        }
        if (System.getProperty("fanout") != null) {
            o = o.fanout(Integer.getInteger("fanout"));
        }
        return o;
    }

    private static void fillKey(SplittableRandom rnd, byte[] key) {
        long a = rnd.nextLong();
        long b = rnd.nextLong();
        for (int i = 0; i < 8; i++) {
            key[i] = (byte) (a >>> (56 - 8 * i));
            key[8 + i] = (byte) (b >>> (56 - 8 * i));
        }
    }

    private static final String[] STATUS = {"NEW", "PAID", "SHIPPED", "DELIVERED", "RETURNED", "CANCELLED"};

    private static void fillValue(SplittableRandom rnd, int i, byte[] value) {
        String row = "cust=" + rnd.nextInt(100_000) + ";amount=" + rnd.nextInt(1_000_000) / 100.0 + ";status="
                + STATUS[rnd.nextInt(STATUS.length)] + ";seq=" + i + ";note=";
        byte[] text = row.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        int n = Math.min(text.length, value.length);
        System.arraycopy(text, 0, value, 0, n);
        for (int p = n; p < value.length; p++) {
            value[p] = (byte) ('a' + rnd.nextInt(26));
        }
    }

    private static void resetHeapPeaks() {
        System.gc();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                pool.resetPeakUsage();
            }
        }
    }

    /** Sum of the heap pools' peaks: an upper bound of the heap in use at any one moment. */
    private static long peakHeap() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.delete(p);
            }
        }
    }
}
