package io.betree.systest;

import io.betree.BetreeException;
import io.betree.Codec;
import io.betree.CorruptionException;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

/**
 * The workload {@link LeakDetectionTest} runs under {@link NettyLeaks}: every path that allocates
 * off-heap buffers, normal and exceptional. Puts, overwrites, deletes, gets and scans on indexes of
 * every codec with small nodes and the smallest cache (so that nodes split, flush, get evicted and
 * are read back), a cursor dropped without close, close and reopen, then damaged files: a block whose
 * checksum fails, nodes whose checksum is right but whose contents are malformed (the parsers'
 * release-on-error paths) and a file that is not a betree file at all. It checks on the way that the
 * environment's off-heap count is zero after every close, and prints what it did.
 */
public final class LeakWorkload {
    static final EnvironmentOptions SMALL_CACHE = EnvironmentOptions.defaults().durability(Durability.NONE)
            .cacheBytes(16L << 20);

    private LeakWorkload() {
    }

    static IndexOptions options(Codec codec) {
        return Dataset.smallNodes(codec);
    }

    /** The options an index of this workload was created with ("idx-XZ" uses XZ, and so on). */
    static IndexOptions options(String name) {
        return options(name.startsWith("idx-") ? Codec.valueOf(name.substring(4)) : Codec.LZ4);
    }

    /** Fails (with an exception the child reports) unless the closed environment holds no off-heap bytes. */
    static void checkReleased(Environment env, String when) {
        long held = env.offHeapBytes();
        System.out.println("OFF_HEAP_AFTER_CLOSE " + when + " " + held + " " + env.cacheStats());
        if (held != 0 || env.cacheStats().bytes() != 0 || env.cacheStats().entries() != 0) {
            throw new IllegalStateException(when + ": " + held + " off-heap bytes still held after close, cache "
                    + env.cacheStats());
        }
    }

    public static void run(Path dir) throws IOException {
        Path envDir = dir.resolve("env");
        Random random = new Random(42);
        long evictions;

        // 1. Writes of every kind with evictions: values of 0.5-3 KiB make 16 MiB of cache overflow
        // with few operations (paranoid detection makes each buffer access slow).
        Environment env = Environment.open(envDir, SMALL_CACHE);
        try {
            for (Codec codec : Codec.values()) {
                Index index = env.openIndex("idx-" + codec, options(codec));
                int rows = codec == Codec.XZ ? 1_500 : 5_000;
                for (int i = 0; i < rows; i++) {
                    byte[] key = Dataset.longKey(random.nextInt(rows * 2));
                    byte[] value = new byte[512 + random.nextInt(2560)];
                    random.nextBytes(value);
                    Arrays.fill(value, value.length / 2, value.length, (byte) i);
                    index.put(key, value);
                    if (i % 7 == 0) {
                        index.delete(Dataset.longKey(random.nextInt(rows * 2)));
                    }
                    if (i % 50 == 0) {
                        index.get(Dataset.longKey(random.nextInt(rows * 2)));
                    }
                }
                try (Cursor c = index.scan(Dataset.longKey(rows / 2), Dataset.longKey(rows))) {
                    while (c.next()) {
                        c.key();
                        c.value();
                    }
                }
            }
            env.checkpoint();
            // Sequential appends (the rightmost-leaf fast path) and deletes of ranges.
            Index seq = env.openIndex("sequential", options(Codec.LZ4));
            for (long i = 0; i < 5_000; i++) {
                seq.put(Dataset.longKey(i), new byte[1024]);
            }
            for (long i = 0; i < 5_000; i += 2) {
                seq.delete(Dataset.longKey(i));
            }
            // A cursor dropped without close: cursors must hold no off-heap memory between calls.
            Cursor dropped = seq.scan();
            dropped.next();
            evictions = env.cacheStats().evictions();
        } finally {
            env.close();
        }
        checkReleased(env, "first session");
        System.out.println("EVICTIONS " + evictions);
        if (evictions == 0) {
            throw new IllegalStateException("the workload did not evict anything; it must exercise eviction");
        }

        // 2. Reopen: everything is read back from disk, then rewritten and scanned in full.
        env = Environment.open(envDir, SMALL_CACHE);
        try {
            for (String name : env.indexNames()) {
                Index index = env.openIndex(name, options(name));
                long n = 0;
                try (Cursor c = index.scan()) {
                    while (c.next()) {
                        n++;
                        if (n % 5 == 0) {
                            index.put(c.key(), c.value()); // writes interleaved with a scan
                        }
                    }
                }
                System.out.println("REOPENED " + name + " " + n + " rows");
            }
        } finally {
            env.close();
        }
        checkReleased(env, "second session");
        env.close(); // idempotent

        // 3. Misuse that must fail before touching memory.
        env = Environment.open(envDir, SMALL_CACHE);
        try {
            Index index = env.openIndex("idx-NONE", options(Codec.NONE));
            expect(IllegalArgumentException.class, () -> index.put(new byte[Index.MAX_KEY_BYTES + 1], new byte[1]));
            expect(IllegalArgumentException.class, () -> index.put(new byte[1], new byte[Index.MAX_VALUE_BYTES + 1]));
            expect(NullPointerException.class, () -> index.put(null, new byte[1]));
            index.put(new byte[Index.MAX_KEY_BYTES], new byte[1 << 20]); // the largest key, a big value
        } finally {
            env.close();
        }
        checkReleased(env, "misuse session");

        // 4. Damage: a bit flip in every fifth block, read until the first CorruptionException.
        DataFileLayout layout = DataFileLayout.read(envDir.resolve("betree.data"));
        Path damaged = copy(envDir, dir.resolve("flipped"));
        for (int i = 0; i < layout.blocks.size(); i += 5) {
            DataFileLayout.Block b = layout.blocks.get(i);
            FileBytes.flipBit(damaged.resolve("betree.data"), b.offset() + b.length() / 2, 5);
        }
        readAllExpectingCorruption(damaged, "bit flips");

        // 5. Checksum-valid but malformed nodes: the parsers' error paths must release what they took.
        int crafted = 0;
        String tagsDone = "";
        for (DataFileLayout.Block b : layout.blocks) {
            if (b.codecId() != 0) {
                continue;
            }
            byte[] bytes = FileBytes.readAt(envDir.resolve("betree.data"), b.offset(), b.length());
            ByteBuffer payload = ByteBuffer.wrap(bytes, DataFileLayout.BLOCK_HEADER_SIZE,
                    bytes.length - DataFileLayout.BLOCK_HEADER_SIZE).slice();
            byte tag = payload.get(0);
            if (tagsDone.indexOf(tag) >= 0) {
                continue;
            }
            if (tag == 'K' && payload.getInt(9) > 2 && payload.getInt(15 + 17) > 8) {
                // The first chunk's stored bytes damaged and its CRC made right again: the chunk is
                // decompressed (or, stored as it is, its rows indexed) before the damage shows.
                payload.put(15 + 25 + 2, (byte) (payload.get(15 + 25 + 2) ^ 0x7f));
                DataFileLayout.fixChunkCrc(payload, 15);
            } else if (tag == 'I') {
                // The first child's message buffer claims a negative size.
                payload.putInt(22, -1);
            } else if (tag == 'M' && payload.remaining() > 1 + 23) {
                // The first message's value runs past the end of the buffer.
                payload.putInt(20, Integer.MAX_VALUE - 3);
            } else if (tag == 'Q') {
                payload.putInt(17, -5); // an impossible basement count
                DataFileLayout.fixLeafHeadCrc(payload);
            } else {
                continue;
            }
            tagsDone += (char) tag;
            Path copy = copy(envDir, dir.resolve("crafted-" + crafted));
            DataFileLayout.fixBlockCrc(bytes);
            FileBytes.overwrite(copy.resolve("betree.data"), b.offset(), bytes);
            readAllExpectingCorruption(copy, "malformed " + (char) tag + " block " + b.number());
            crafted++;
        }
        System.out.println("CRAFTED " + crafted + " (node kinds " + tagsDone + ")");

        // 6. Not a betree file at all.
        Path foreign = dir.resolve("foreign");
        Files.createDirectories(foreign);
        Files.writeString(foreign.resolve("betree.data"), "plain text, not a block file\n".repeat(400));
        try (Environment e = Environment.open(foreign, SMALL_CACHE)) {
            throw new IllegalStateException("a text file was opened as an environment in " + e.directory());
        } catch (CorruptionException expected) {
            System.out.println("FOREIGN " + expected.getMessage());
        }
        // The directory is usable again once the file is replaced: the failed open released the lock.
        Files.delete(foreign.resolve("betree.data"));
        try (Environment e = Environment.open(foreign, SMALL_CACHE)) {
            e.openIndex("fresh", options(Codec.ZSTD)).put(new byte[] {1}, new byte[] {2});
        }
    }

    /** Opens {@code dir}, scans and gets everything until a CorruptionException, then closes. */
    static void readAllExpectingCorruption(Path dir, String what) {
        Environment env = Environment.open(dir, SMALL_CACHE);
        BetreeException failure = null;
        try {
            for (String name : env.indexNames()) {
                Index index = env.openIndex(name, options(name));
                try (Cursor c = index.scan()) {
                    while (c.next()) {
                        index.get(c.key());
                    }
                }
            }
        } catch (CorruptionException e) {
            failure = e;
        } finally {
            env.close();
        }
        checkReleased(env, what);
        System.out.println("CORRUPTION " + what + ": " + (failure == null ? "none detected" : failure.getMessage()));
        if (failure == null) {
            throw new IllegalStateException(what + ": no CorruptionException");
        }
    }

    interface Action {
        void run();
    }

    static void expect(Class<? extends Throwable> type, Action action) {
        try {
            action.run();
        } catch (Throwable t) {
            if (type.isInstance(t)) {
                return;
            }
            throw new IllegalStateException("expected " + type.getSimpleName() + ", got " + t, t);
        }
        throw new IllegalStateException("expected " + type.getSimpleName());
    }

    static Path copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        Files.copy(from.resolve("betree.data"), to.resolve("betree.data"));
        return to;
    }
}
