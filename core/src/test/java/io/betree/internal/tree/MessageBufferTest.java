package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Searches of a message buffer against a plain list. Keys are drawn from the bytes 0x00, 0x01 and
 * 0xff with lengths 0 to 11, so that many pairs share their first 8 bytes, or differ only by
 * trailing zero bytes, and the 8-byte prefix kept in the index must fall back to full keys.
 */
class MessageBufferTest {
    private static final byte[] ALPHABET = {0x00, 0x01, (byte) 0xff};

    private record Message(byte[] key, long msn, byte type) {
    }

    @Test
    void searchesAgreeWithAModelWhenKeysTieOnTheirPrefix() {
        Random rnd = new Random(20261122);
        NodeMemory memory = new NodeMemory();
        for (int round = 0; round < 20; round++) {
            MessageBuffer buffer = new MessageBuffer(memory);
            List<Message> model = new ArrayList<>();
            try {
                int n = 1 + rnd.nextInt(600);
                for (int i = 0; i < n; i++) {
                    byte[] key = randomKey(rnd);
                    byte type = rnd.nextInt(4) == 0 ? MessageType.DELETE : MessageType.PUT;
                    long msn = i + 1;
                    buffer.append(type, msn, 0L, key, type == MessageType.PUT ? key : null);
                    model.add(new Message(key, msn, type));
                }
                for (int probe = 0; probe < 200; probe++) {
                    byte[] from = randomKey(rnd);
                    byte[] upper = rnd.nextInt(5) == 0 ? null : randomKey(rnd);
                    long snapshot = rnd.nextInt(n + 1);
                    assertArrayEquals(expectedVisible(model, from, upper, snapshot),
                            keysAndMsns(buffer, buffer.visibleInRange(from, upper, snapshot)), "round " + round);
                    int newest = buffer.findNewest(from, snapshot);
                    assertEquals(expectedNewest(model, from, snapshot), newest < 0 ? -1 : buffer.msn(newest));
                }
                buffer.consolidate();
                for (int probe = 0; probe < 200; probe++) {
                    byte[] key = randomKey(rnd);
                    long below = model.stream().filter(m -> Keys.compare(m.key, key) < 0).count();
                    long atOrBelow = model.stream().filter(m -> Keys.compare(m.key, key) <= 0).count();
                    assertEquals(below, buffer.lowerBound(key, false));
                    assertEquals(atOrBelow, buffer.lowerBound(key, true));
                }
                for (int k = 1; k < buffer.sortedCount(); k++) {
                    int a = buffer.sortedOffset(k - 1);
                    int b = buffer.sortedOffset(k);
                    int c = buffer.compareKeys(a, b);
                    assertTrue(c < 0 || (c == 0 && buffer.msn(a) < buffer.msn(b)), "order at " + k);
                }
            } finally {
                buffer.release();
            }
        }
        assertEquals(0, memory.used());
    }

    /**
     * Messages arriving in key order, in reverse, as several interleaved ascending sequences (the
     * writes of successive time-series commits), at random, and as sorted runs handed over by a
     * flush: the runs, the tail and a consolidated buffer all yield (key, msn) order.
     */
    @Test
    void ordersMessagesWhateverOrderTheyArriveIn() {
        Random rnd = new Random(20261125);
        NodeMemory memory = new NodeMemory();
        for (int round = 0; round < 60; round++) {
            MessageBuffer buffer = new MessageBuffer(memory);
            MessageBuffer source = new MessageBuffer(memory);
            List<Message> model = new ArrayList<>();
            try {
                int n = 1 + rnd.nextInt(700);
                int sequences = 1 + rnd.nextInt(5);
                int pattern = round % 4;
                long msn = 0;
                for (int i = 0; i < n; i++) {
                    int rank = switch (pattern) {
                        case 0 -> i;
                        case 1 -> n - i;
                        case 2 -> (i % sequences) * 100_000 + i / sequences;
                        default -> rnd.nextInt(n);
                    };
                    byte[] key = java.nio.ByteBuffer.allocate(4 + rnd.nextInt(9)).putInt(rank).array();
                    buffer.append(MessageType.PUT, ++msn, 0L, key, key);
                    model.add(new Message(key, msn, MessageType.PUT));
                    if (rnd.nextInt(50) == 0) {
                        // A flush hands over a sorted slice of a parent's buffer, newer than all so far.
                        int m = 1 + rnd.nextInt(40);
                        for (int j = 0; j < m; j++) {
                            byte[] k = java.nio.ByteBuffer.allocate(4).putInt(rnd.nextInt(n + 1)).array();
                            source.append(MessageType.PUT, ++msn, 0L, k, k);
                            model.add(new Message(k, msn, MessageType.PUT));
                        }
                        source.consolidate();
                        buffer.appendRun(source, 0, source.count());
                        source.release();
                        source = new MessageBuffer(memory);
                    }
                }
                model.sort((a, b) -> {
                    int c = Keys.compare(a.key, b.key);
                    return c != 0 ? c : Long.compare(a.msn, b.msn);
                });
                assertArrayEquals(flatten(model), keysAndMsns(buffer, buffer.orderedOffsets()), "round " + round);
                buffer.consolidate();
                int[] runs = new int[buffer.sortedCount()];
                for (int k = 0; k < runs.length; k++) {
                    runs[k] = buffer.sortedOffset(k);
                }
                assertArrayEquals(flatten(model), keysAndMsns(buffer, runs), "round " + round + ", consolidated");
            } finally {
                buffer.release();
                source.release();
            }
        }
        assertEquals(0, memory.used());
    }

    @Test
    void serializeWritesWhatAConsolidatedBufferWrites() {
        Random rnd = new Random(20261123);
        NodeMemory memory = new NodeMemory();
        List<Integer> sizes = new ArrayList<>(List.of(1, 2, 63, 64, 65, 66, 129, 130, 131, 200));
        for (int round = 0; round < 30; round++) {
            sizes.add(1 + rnd.nextInt(3000));
        }
        for (int n : sizes) {
            MessageBuffer lazy = new MessageBuffer(memory);
            MessageBuffer consolidated = new MessageBuffer(memory);
            try {
                fillShuffled(new Random(n), n, lazy, consolidated);
                assertEquals(lazy.count() - lazy.sortedCount() > 0, n % 65 != 0, "tail present, n=" + n);
                consolidated.consolidate();
                assertEquals(consolidated.count(), consolidated.sortedCount());
                assertArrayEquals(serialized(consolidated), serialized(lazy), "n=" + n);
                assertEquals(lazy.bytes(), serialized(lazy).length);
            } finally {
                lazy.release();
                consolidated.release();
            }
        }
        assertEquals(0, memory.used());
    }

    /**
     * A root's checkpoint image keeps each buffer in arrival order (one copy of the data); loaded
     * back, the buffer is sorted and holds exactly what the sorted form holds.
     */
    @Test
    void aBufferWrittenInArrivalOrderLoadsSorted() {
        NodeMemory memory = new NodeMemory();
        for (int n : new int[] {1, 2, 64, 65, 130, 1000, 3000}) {
            MessageBuffer buffer = new MessageBuffer(memory);
            try {
                Random rnd = new Random(n);
                for (int i = 0; i < n; i++) {
                    // Distinct (key, msn) pairs, as in a tree; equal keys arrive with msns out of order.
                    byte[] key = randomKey(rnd);
                    byte type = rnd.nextInt(4) == 0 ? MessageType.DELETE : MessageType.PUT;
                    buffer.append(type, 1 + (i * 7919L) % 100_003, 0L, key, type == MessageType.PUT ? ("v" + i).getBytes() : null);
                }
                ByteBuf image = Unpooled.buffer();
                try {
                    buffer.serializeInArrivalOrder(image);
                    assertEquals(buffer.bytes(), image.readableBytes(), "n=" + n);
                    MessageBuffer loaded = MessageBuffer.read(memory, image, image.readableBytes());
                    try {
                        assertEquals(n, loaded.count());
                        assertArrayEquals(serialized(buffer), serialized(loaded), "n=" + n);
                    } finally {
                        loaded.release();
                    }
                } finally {
                    image.release();
                }
            } finally {
                buffer.release();
            }
        }
        assertEquals(0, memory.used());
    }

    @Test
    void successorIsEmptyWithRoomForWhatCame() {
        NodeMemory memory = new NodeMemory();
        MessageBuffer small = new MessageBuffer(memory);
        MessageBuffer large = new MessageBuffer(memory);
        MessageBuffer smallNext = null;
        MessageBuffer largeNext = null;
        try {
            fillShuffled(new Random(1), 40, small);
            byte[] value = new byte[1000];
            for (int i = 0; i < 2000; i++) {
                large.append(MessageType.PUT, i + 1, 0L, new byte[] {(byte) (i >> 8), (byte) i}, value);
            }
            smallNext = small.successor();
            largeNext = large.successor();
            assertEquals(0, smallNext.count());
            assertEquals(0, smallNext.bytes());
            assertEquals(0, largeNext.count());
            assertTrue(largeNext.memoryBytes() >= 256 << 10, "half of 2 MB, capped at 256 KiB");
            assertTrue(largeNext.memoryBytes() < 512 << 10, "within the pool's chunks");
            assertEquals(40, small.count(), "the flushed buffer keeps its messages");
            largeNext.append(MessageType.PUT, 5000, 0L, new byte[] {1}, value);
            assertEquals(1, largeNext.count());
        } finally {
            small.release();
            large.release();
            if (smallNext != null) {
                smallNext.release();
            }
            if (largeNext != null) {
                largeNext.release();
            }
        }
        assertEquals(0, memory.used());
    }

    @Test
    void serializeLeavesTheBufferUnchanged() {
        Random rnd = new Random(20261124);
        NodeMemory memory = new NodeMemory();
        for (int n : new int[] {40, 64, 100, 1000, 2500}) {
            MessageBuffer buffer = new MessageBuffer(memory);
            try {
                fillShuffled(new Random(n), n, buffer);
                assertTrue(buffer.sortedCount() < buffer.count(), "the tail is not yet consolidated");
                long seed = rnd.nextLong();
                Map<String, String> before = observe(buffer, memory, new Random(seed));
                byte[] firstImage = serialized(buffer);
                Map<String, String> after = observe(buffer, memory, new Random(seed));
                byte[] secondImage = serialized(buffer);
                assertEquals(before.keySet(), after.keySet());
                for (String fact : before.keySet()) {
                    assertEquals(before.get(fact), after.get(fact), fact + ", n=" + n);
                }
                assertArrayEquals(firstImage, secondImage, "n=" + n);
                assertTrue(buffer.sortedCount() < buffer.count(), "the tail is still unconsolidated");
            } finally {
                buffer.release();
            }
        }
        assertEquals(0, memory.used());
    }

    /**
     * Appends the same {@code n} messages to each buffer: random keys from the small alphabet (so
     * many are equal), msns a shuffled permutation (so equal keys arrive out of msn order), now and
     * then a repeat of an earlier (key, msn) with another value, and values unique per append so
     * that the order of the bytes written shows any difference in message order.
     */
    private static void fillShuffled(Random rnd, int n, MessageBuffer... buffers) {
        long[] msns = new long[n];
        for (int i = 0; i < n; i++) {
            msns[i] = i + 1;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            long t = msns[i];
            msns[i] = msns[j];
            msns[j] = t;
        }
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] key;
            long msn;
            if (i > 0 && rnd.nextInt(20) == 0) {
                int earlier = rnd.nextInt(i);
                key = keys.get(earlier);
                msn = msns[earlier];
            } else {
                key = randomKey(rnd);
                msn = msns[i];
            }
            keys.add(key);
            byte type = rnd.nextInt(4) == 0 ? MessageType.DELETE : MessageType.PUT;
            byte[] value = type == MessageType.PUT ? ("v" + i).getBytes() : null;
            for (MessageBuffer b : buffers) {
                b.append(type, msn, i, key, value);
            }
        }
    }

    private static byte[] serialized(MessageBuffer buffer) {
        ByteBuf out = Unpooled.buffer();
        try {
            buffer.serialize(out);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** What the buffer shows: sizes, its data bytes and the answers of its queries, by name. */
    private static Map<String, String> observe(MessageBuffer buffer, NodeMemory memory, Random rnd) {
        Map<String, String> facts = new LinkedHashMap<>();
        facts.put("count", String.valueOf(buffer.count()));
        facts.put("sortedCount", String.valueOf(buffer.sortedCount()));
        facts.put("bytes", String.valueOf(buffer.bytes()));
        facts.put("memoryBytes", String.valueOf(buffer.memoryBytes()));
        facts.put("memory.used", String.valueOf(memory.used()));
        byte[] data = new byte[buffer.bytes()];
        buffer.dataView().get(0, data);
        facts.put("data", Arrays.toString(data));
        int[] sortedOffsets = new int[buffer.sortedCount()];
        for (int k = 0; k < sortedOffsets.length; k++) {
            sortedOffsets[k] = buffer.sortedOffset(k);
        }
        facts.put("sortedOffsets", Arrays.toString(sortedOffsets));
        facts.put("maxKey", Arrays.toString(buffer.maxKey()));
        for (int probe = 0; probe < 300; probe++) {
            byte[] key = randomKey(rnd);
            long snapshot = rnd.nextInt(buffer.count() + 2);
            facts.put("findNewest " + probe, String.valueOf(buffer.findNewest(key, snapshot)));
            byte[] upper = rnd.nextInt(5) == 0 ? null : randomKey(rnd);
            facts.put("visibleInRange " + probe, Arrays.toString(buffer.visibleInRange(key, upper, snapshot)));
            facts.put("lowerBound " + probe, buffer.lowerBound(key, false) + " " + buffer.lowerBound(key, true));
        }
        return facts;
    }

    private static byte[] randomKey(Random rnd) {
        byte[] key = new byte[rnd.nextInt(12)];
        for (int i = 0; i < key.length; i++) {
            key[i] = ALPHABET[rnd.nextInt(ALPHABET.length)];
        }
        return key;
    }

    /** Key bytes and msn of each visible message, flattened, for one assertion. */
    private static long[] expectedVisible(List<Message> model, byte[] from, byte[] upper, long snapshot) {
        List<Message> inRange = new ArrayList<>();
        for (Message m : model) {
            if (m.msn <= snapshot && Keys.compare(m.key, from) >= 0 && (upper == null || Keys.compare(m.key, upper) < 0)) {
                inRange.add(m);
            }
        }
        inRange.sort((a, b) -> {
            int c = Keys.compare(a.key, b.key);
            return c != 0 ? c : Long.compare(a.msn, b.msn);
        });
        List<Message> newest = new ArrayList<>();
        for (Message m : inRange) {
            if (!newest.isEmpty() && Keys.compare(newest.get(newest.size() - 1).key, m.key) == 0) {
                newest.set(newest.size() - 1, m);
            } else {
                newest.add(m);
            }
        }
        return flatten(newest);
    }

    private static long[] keysAndMsns(MessageBuffer buffer, int[] offsets) {
        List<Message> out = new ArrayList<>();
        for (int off : offsets) {
            out.add(new Message(buffer.key(off), buffer.msn(off), buffer.type(off)));
        }
        return flatten(out);
    }

    private static long[] flatten(List<Message> messages) {
        List<Long> out = new ArrayList<>();
        for (Message m : messages) {
            out.add((long) m.key.length);
            for (byte b : m.key) {
                out.add((long) (b & 0xff));
            }
            out.add(m.msn);
            out.add((long) m.type);
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    private static long expectedNewest(List<Message> model, byte[] key, long snapshot) {
        long best = -1;
        for (Message m : model) {
            if (m.msn <= snapshot && Keys.compare(m.key, key) == 0) {
                best = Math.max(best, m.msn);
            }
        }
        return best;
    }
}
