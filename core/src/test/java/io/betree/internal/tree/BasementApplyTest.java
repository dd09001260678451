package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link Basement#apply} against a model of every key's versions: batches of puts and deletes, few
 * or many per basement, applied at horizons that lag the commits by random amounts, so that rows
 * keep their timestamps, lose them, or lose their older versions; after each batch every snapshot
 * at or after the horizon must read what the model says, and the rows must keep their order and
 * version invariants.
 */
class BasementApplyTest {
    private static final byte[] ALPHABET = {0x00, 0x01, 0x7f, (byte) 0xff};
    private static final BlockCompressor NONE = Compressors.create("none");

    /** One version of a key: its commit timestamp and value, null for a delete. */
    private record Version(long ts, byte[] value) {
    }

    /**
     * A test function, "append": an absent value becomes the argument; a present one gets the
     * argument appended (the argument alone once the value passes 40 bytes); an argument that starts
     * with a zero byte deletes the key.
     */
    static final UpdateFunctions APPEND = new UpdateFunctions() {
        @Override
        public byte[] apply(String name, byte[] key, byte[] old, byte[] argument) {
            if (!knows(name)) {
                throw UpdateFunctions.unknown(name);
            }
            if (argument.length > 0 && argument[0] == 0) {
                return null;
            }
            if (old == null || old.length > 40) {
                return argument.clone();
            }
            byte[] joined = java.util.Arrays.copyOf(old, old.length + argument.length);
            System.arraycopy(argument, 0, joined, old.length, argument.length);
            return joined;
        }

        @Override
        public boolean knows(String name) {
            return name.equals("append");
        }
    };

    @Test
    void appliedBatchesReadAsTheModelAtEverySnapshotFromTheHorizon() {
        applyRandomBatches(20261125, false);
    }

    @Test
    void updatesBecomeTheValueTheirFunctionsMakeOfTheOneBefore() {
        applyRandomBatches(20261128, true);
    }

    /** Rounds of random batches (with update messages when {@code updates}) checked against the model. */
    private static void applyRandomBatches(long seed, boolean updates) {
        Random rnd = new Random(seed);
        NodeMemory memory = new NodeMemory();
        for (int round = 0; round < 30; round++) {
            Basement basement = Basement.empty(1, memory, new BasementChunks(NONE, new RecentChunkMaps()));
            TreeMap<byte[], List<Version>> model = new TreeMap<>(Keys::compare);
            long ts = 0;
            long horizon = 0;
            try {
                for (int batch = 0; batch < 40; batch++) {
                    MessageBuffer messages = new MessageBuffer(memory);
                    int n = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(400) : 1 + rnd.nextInt(6);
                    for (int i = 0; i < n; i++) {
                        byte[] key = rnd.nextInt(3) == 0 && !model.isEmpty() ? existingKey(model, rnd) : randomKey(rnd);
                        ts++;
                        int kind = rnd.nextInt(updates ? 10 : 5);
                        List<Version> versions = model.computeIfAbsent(key, k -> new ArrayList<>());
                        if (kind >= 5) {
                            byte[] argument = rnd.nextInt(8) == 0 ? new byte[] {0} : randomValue(rnd);
                            byte[] before = versions.isEmpty() ? null : versions.get(versions.size() - 1).value;
                            messages.append(MessageType.UPDATE, ts, 0L, key, UpdateList.of("append", argument));
                            versions.add(new Version(ts, APPEND.apply("append", key, before, argument)));
                            continue;
                        }
                        boolean delete = kind == 0;
                        byte[] value = delete ? null : randomValue(rnd);
                        messages.append(delete ? MessageType.DELETE : MessageType.PUT, ts, 0L, key, value);
                        versions.add(new Version(ts, value));
                    }
                    messages.consolidate();
                    horizon = Math.max(horizon, ts - rnd.nextInt(rnd.nextBoolean() ? 3 : 200));
                    basement.apply(messages, 0, messages.sortedCount(), horizon, APPEND);
                    messages.release();
                    for (long snapshot = horizon; snapshot <= ts; snapshot += 1 + rnd.nextInt(5)) {
                        checkReads(basement, model, snapshot, "round " + round + " batch " + batch);
                    }
                    checkReads(basement, model, ts, "round " + round + " batch " + batch);
                    assertRowsInOrder(basement, memory);
                }
            } finally {
                basement.releaseMemory();
            }
        }
    }

    @Test
    void versionsNoSnapshotCanSeeAreDropped() {
        NodeMemory memory = new NodeMemory();
        Basement basement = Basement.empty(1, memory, new BasementChunks(NONE, new RecentChunkMaps()));
        try {
            byte[] key = {5};
            for (long ts = 1; ts <= 3; ts++) {
                MessageBuffer messages = new MessageBuffer(memory);
                messages.append(MessageType.PUT, ts, 0L, key, new byte[] {(byte) ts});
                messages.consolidate();
                basement.apply(messages, 0, 1, 0, UpdateFunctions.NONE);
                messages.release();
            }
            assertEquals(3, basement.count(), "three versions while no snapshot has passed them");
            // A batch for another key, whose horizon passes every version of key 5: only the newest stays.
            MessageBuffer messages = new MessageBuffer(memory);
            messages.append(MessageType.PUT, 4, 0L, new byte[] {9}, new byte[] {1});
            messages.append(MessageType.DELETE, 4, 0L, new byte[] {1}, null);
            messages.consolidate();
            basement.apply(messages, 0, 2, 4, UpdateFunctions.NONE);
            messages.release();
            assertEquals(2, basement.count());
            assertArrayEquals(new byte[] {3}, basement.get(key, 4, 0));
            assertArrayEquals(new byte[] {3}, basement.get(key, 0, 0), "visible to every snapshot now");
        } finally {
            basement.releaseMemory();
        }
    }

    private static void checkReads(Basement basement, TreeMap<byte[], List<Version>> model, long snapshot,
            String where) {
        for (Map.Entry<byte[], List<Version>> e : model.entrySet()) {
            byte[] expected = null;
            for (Version v : e.getValue()) {
                if (v.ts <= snapshot) {
                    expected = v.value;
                }
            }
            assertArrayEquals(expected, basement.get(e.getKey(), snapshot, 0), where + " snapshot " + snapshot);
        }
    }

    /**
     * Walks the basement's rows (layout in {@link Basement}) and checks the row invariants
     * that reads and {@link Basement#apply}'s bulk copy rely on: keys in order, versions of a key
     * newest first, a row without a timestamp the last version of its key, no tombstone without
     * a timestamp. Loading does not check order, so the test must.
     */
    private static void assertRowsInOrder(Basement basement, NodeMemory memory) {
        ByteBuf image = memory.allocate(Math.max(16, basement.bytes()));
        try {
            basement.writeRowsTo(image);
            ByteBuffer b = NodeMemory.view(image);
            int rows = b.getInt(1);
            assertEquals(basement.count(), rows);
            int off = 5;
            byte[] prevKey = null;
            long prevTs = 0;
            boolean prevHadTs = true;
            for (int r = 0; r < rows; r++) {
                int keyLength = b.getShort(off) & 0xffff;
                int flags = b.get(off + 2);
                int valueLength = b.getInt(off + 3);
                boolean hasTs = (flags & 2) != 0;
                long ts = hasTs ? b.getLong(off + 7) : 0;
                int keyOff = off + 7 + (hasTs ? 8 : 0);
                byte[] key = new byte[keyLength];
                b.get(keyOff, key);
                assertTrue(hasTs || (flags & 1) == 0, "row " + r + ": a tombstone visible to all is kept");
                if (prevKey != null) {
                    int c = Keys.compare(prevKey, key);
                    assertTrue(c <= 0, "row " + r + ": key out of order");
                    if (c == 0) {
                        assertTrue(prevHadTs, "row " + r + ": a version below one visible to all");
                        assertTrue(!hasTs || ts < prevTs, "row " + r + ": versions not newest first");
                    }
                }
                prevKey = key;
                prevTs = ts;
                prevHadTs = hasTs;
                off = keyOff + keyLength + valueLength;
            }
            assertEquals(image.writerIndex(), off, "trailing bytes after the last row");
        } finally {
            memory.release(image);
        }
    }

    private static byte[] existingKey(TreeMap<byte[], List<Version>> model, Random rnd) {
        byte[] probe = randomKey(rnd);
        byte[] k = model.ceilingKey(probe);
        return k != null ? k : model.firstKey();
    }

    private static byte[] randomKey(Random rnd) {
        byte[] key = new byte[1 + rnd.nextInt(12)];
        for (int i = 0; i < key.length; i++) {
            key[i] = ALPHABET[rnd.nextInt(ALPHABET.length)];
        }
        return key;
    }

    private static byte[] randomValue(Random rnd) {
        byte[] v = new byte[rnd.nextInt(20)];
        rnd.nextBytes(v);
        return v;
    }

    /** Calls of {@link #ADD} that threw ("boom"). */
    private static final java.util.concurrent.atomic.AtomicInteger FAILED = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Adds its 8-byte argument to the 8-byte value (absent: 0); "grow" makes the value 9 bytes;
     * "boom" throws.
     */
    private static final UpdateFunctions ADD = new UpdateFunctions() {
        @Override
        public byte[] apply(String name, byte[] key, byte[] old, byte[] argument) {
            if (name.equals("boom")) {
                throw new IllegalStateException("boom");
            }
            long sum = (old == null ? 0 : ByteBuffer.wrap(old).getLong()) + ByteBuffer.wrap(argument).getLong();
            return ByteBuffer.allocate(name.equals("grow") ? 9 : 8).putLong(sum).array();
        }

        @Override
        public boolean knows(String name) {
            return name.equals("add") || name.equals("grow") || name.equals("boom");
        }

        @Override
        public void failed(String name, byte[] key, Throwable failure) {
            FAILED.incrementAndGet();
        }
    };

    @Test
    void sameLengthUpdatesEveryoneSeesOverwriteValuesInPlaceAndOthersRebuild() {
        NodeMemory memory = new NodeMemory();
        Basement basement = Basement.empty(1, memory, new BasementChunks(NONE, new RecentChunkMaps()));
        try {
            MessageBuffer load = new MessageBuffer(memory);
            for (int k = 0; k < 100; k++) {
                load.append(MessageType.PUT, 1, 0L, new byte[] {(byte) k}, counter(10));
            }
            load.consolidate();
            assertTrue(basement.apply(load, 0, 100, 1, ADD), "new keys: rebuilt");
            load.release();
            // Every snapshot sees msn 2: the values are overwritten where they lie.
            assertFalse(applyUpdates(memory, basement, "add", 2, 2, 0, 50), "overwritten in place");
            assertEquals(100, basement.count());
            assertArrayEquals(counter(11), basement.get(new byte[] {7}, 2, 0));
            assertArrayEquals(counter(10), basement.get(new byte[] {70}, 2, 0));
            // A snapshot at 2 is still open: msn 3 needs a version of its own, so the basement is rebuilt.
            assertTrue(applyUpdates(memory, basement, "add", 3, 2, 0, 10), "a snapshot needs the old version");
            assertArrayEquals(counter(11), basement.get(new byte[] {7}, 2, 0));
            assertArrayEquals(counter(12), basement.get(new byte[] {7}, 3, 0));
            // Rows with a timestamp (key 7's two versions) are not plain: rebuilt, old versions dropped.
            assertTrue(applyUpdates(memory, basement, "add", 4, 4, 0, 10), "versioned rows: rebuilt");
            assertEquals(100, basement.count(), "the version for the snapshot at 2 dropped once it closed");
            assertFalse(applyUpdates(memory, basement, "add", 5, 5, 0, 10), "plain again");
            // A value that grows, or a key with no row, needs a rebuild.
            assertTrue(applyUpdates(memory, basement, "grow", 6, 6, 20, 21));
            assertEquals(9, basement.get(new byte[] {20}, 6, 0).length);
            assertTrue(applyUpdates(memory, basement, "add", 7, 7, 99, 101));
            assertArrayEquals(counter(1), basement.get(new byte[] {(byte) 100}, 7, 0));
            assertArrayEquals(counter(14), basement.get(new byte[] {7}, 7, 0));
            // A put, then an update of the same key, in one batch: the update's value is written.
            MessageBuffer both = new MessageBuffer(memory);
            both.append(MessageType.PUT, 8, 0L, new byte[] {30}, counter(100));
            both.append(MessageType.UPDATE, 9, 0L, new byte[] {30}, UpdateList.of("add", counter(5)));
            both.consolidate();
            assertFalse(basement.apply(both, 0, 2, 9, ADD), "overwritten in place");
            both.release();
            assertArrayEquals(counter(105), basement.get(new byte[] {30}, 9, 0));
            // A function that throws changes nothing, and each of its calls is counted once.
            FAILED.set(0);
            assertFalse(applyUpdates(memory, basement, "boom", 10, 10, 60, 65));
            assertEquals(5, FAILED.get());
            assertArrayEquals(counter(10), basement.get(new byte[] {60}, 10, 0));
            // A row that expires (or a tombstone) anywhere in the basement: rebuilt, so that it can go.
            MessageBuffer ttl = new MessageBuffer(memory);
            ttl.append(MessageType.PUT_EXPIRING, 11, 0L, new byte[] {90}, Expiry.wrap(Long.MAX_VALUE - 1, counter(1)));
            ttl.consolidate();
            assertTrue(basement.apply(ttl, 0, 1, 11, ADD));
            ttl.release();
            assertTrue(applyUpdates(memory, basement, "add", 12, 12, 0, 5), "an expiring row elsewhere: rebuilt");
        } finally {
            basement.releaseMemory();
        }
    }

    /** Applies "{@code function}(1)" updates of keys {@code [from, to)} at {@code msn}; returns apply's answer. */
    private static boolean applyUpdates(NodeMemory memory, Basement basement, String function, long msn, long horizon,
            int from, int to) {
        MessageBuffer updates = new MessageBuffer(memory);
        try {
            for (int k = from; k < to; k++) {
                updates.append(MessageType.UPDATE, msn, 0L, new byte[] {(byte) k}, UpdateList.of(function, counter(1)));
            }
            updates.consolidate();
            return basement.apply(updates, 0, updates.count(), horizon, ADD);
        } finally {
            updates.release();
        }
    }

    private static byte[] counter(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }
}
