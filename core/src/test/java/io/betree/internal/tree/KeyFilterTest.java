package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The basement key filter: it never loses a key, admits few absent ones, keeps its answers through
 * its stored form, refuses a stored form that cannot be a filter, and hashes keys exactly as the
 * format describes (stored filters depend on it).
 */
class KeyFilterTest {
    private final NodeMemory memory = new NodeMemory();

    @AfterEach
    void everythingReleased() {
        assertEquals(0, memory.used(), "node memory left after the filters and basements were released");
    }

    @Test
    void holdsEveryKeyOfItsBasementAndAdmitsFewOthers() {
        Random rnd = new Random(7);
        Set<ByteBuffer> present = new HashSet<>();
        Basement basement = basementOf(rnd, 2_000, present);
        KeyFilter filter = KeyFilter.of(memory, basement);
        try {
            for (int p = 0; p < basement.count(); p++) {
                assertTrue(filter.mayContain(basement.keyHash(p)), "row " + p);
            }
            int admitted = absentKeysAdmitted(filter, present, rnd);
            // Sized for an eighth more keys than it holds: under 1% in theory; 1.5% is the bar.
            assertTrue(admitted < 1_500, admitted + " of 100000 absent keys admitted");
        } finally {
            filter.release();
            basement.releaseMemory();
        }
    }

    @Test
    void growsPartsOnceFullThenRefusesAndLosesNoneItTook() {
        Basement basement = basementOf(new Random(8), 100, new HashSet<>());
        KeyFilter filter = KeyFilter.of(memory, basement);
        try {
            Random rnd = new Random(9);
            Set<Long> added = new HashSet<>();
            while (true) {
                long h = rnd.nextLong();
                if (!filter.tryAdd(h)) {
                    break;
                }
                added.add(h);
            }
            // 100 rows, room for an eighth more, 112 keys at ten bits, rounded up to 18 words: 115
            // keys; then parts for a quarter of what it holds, at 14 bits: 28 keys (7 words, 32),
            // 36 (8 words, 36), 45 (10 words, 45).
            assertEquals(KeyFilter.MAX_PARTS, filter.parts());
            assertEquals(15 + 32 + 36 + 45, added.size());
            assertEquals(100 + added.size(), filter.added());
            for (long h : added) {
                assertTrue(filter.mayContain(h));
            }
            for (int p = 0; p < basement.count(); p++) {
                assertTrue(filter.mayContain(basement.keyHash(p)), "row " + p);
            }
            assertFalse(filter.tryAdd(1L));
        } finally {
            filter.release();
            basement.releaseMemory();
        }
    }

    @Test
    void aFilterGrownToAllItsPartsStillAdmitsFewAbsentKeys() {
        Random rnd = new Random(11);
        Set<ByteBuffer> present = new HashSet<>();
        Basement basement = basementOf(rnd, 1_000, present);
        KeyFilter filter = KeyFilter.of(memory, basement);
        try {
            while (true) {
                byte[] k = randomKey(rnd);
                if (present.contains(ByteBuffer.wrap(k))) {
                    continue;
                }
                if (!filter.tryAdd(KeyFilter.hash(k))) {
                    break;
                }
                present.add(ByteBuffer.wrap(k));
            }
            assertEquals(KeyFilter.MAX_PARTS, filter.parts());
            int admitted = absentKeysAdmitted(filter, present, rnd);
            // Each part full: 0.84% for the first, 0.18% for each of the three grown: 1.4% in theory.
            assertTrue(admitted < 1_800, admitted + " of 100000 absent keys admitted");
        } finally {
            filter.release();
            basement.releaseMemory();
        }
    }

    @Test
    void aStoredFilterOfSeveralPartsAnswersAsTheOriginalAndOwnsItsWordsOnceCopied() {
        Random rnd = new Random(12);
        Basement basement = basementOf(rnd, 300, new HashSet<>());
        KeyFilter filter = KeyFilter.of(memory, basement);
        for (int i = 0; i < 150; i++) {
            assertTrue(filter.tryAdd(rnd.nextLong()));
        }
        assertEquals(3, filter.parts());
        ByteBuf stored = memory.allocate(filter.serializedSize());
        KeyFilter read = null;
        KeyFilter copy = null;
        try {
            filter.write(stored);
            assertEquals(filter.serializedSize(), stored.readableBytes());
            read = KeyFilter.read(memory, stored);
            assertFalse(stored.isReadable());
            assertEquals(3, read.parts());
            assertEquals(filter.added(), read.added());
            assertEquals(0, read.memoryBytes(), "parts read use the stored bytes in place");
            copy = read.ownCopy();
            assertEquals(filter.serializedSize() - 3 * 9, copy.memoryBytes());
            stored.setZero(0, stored.capacity()); // the copy no longer depends on the stored bytes
            for (int n = 0; n < 20_000; n++) {
                long h = rnd.nextLong();
                assertEquals(filter.mayContain(h), copy.mayContain(h));
            }
            // Adding to a filter read goes on in its last part, as to the original.
            for (int i = 0; i < 10; i++) {
                long h = rnd.nextLong();
                assertTrue(copy.tryAdd(h));
                assertTrue(copy.mayContain(h));
            }
        } finally {
            memory.release(stored);
            filter.release();
            if (copy != null) {
                copy.release();
            }
            basement.releaseMemory();
        }
    }

    @Test
    void aStoredFormThatCannotBeAFilterIsRefused() {
        assertRefused(0, 5, 1, 8); // no probes
        assertRefused(6, -1, 1, 8); // a negative key count
        assertRefused(6, 5, 2, 8); // words beyond the bytes present
        assertRefused(6, 5, -1, 0);
        assertRefused(0x80 | 6, 5, 1, 8); // another part announced, none there
        ByteBuf in = memory.allocate(9 * (KeyFilter.MAX_PARTS + 1));
        try {
            for (int part = 0; part <= KeyFilter.MAX_PARTS; part++) {
                in.writeByte(0x80 | 6).writeInt(0).writeInt(0);
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyFilter.read(memory, in));
            assertTrue(e.getMessage().contains("impossible key filter (part " + (KeyFilter.MAX_PARTS + 1)),
                    e.getMessage());
        } finally {
            memory.release(in);
        }
    }

    private void assertRefused(int probes, int keys, int words, int bytesPresent) {
        ByteBuf in = memory.allocate(9 + bytesPresent);
        try {
            in.writeByte(probes).writeInt(keys).writeInt(words).writeZero(bytesPresent);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyFilter.read(memory, in));
            assertTrue(e.getMessage().contains("impossible key filter"), e.getMessage());
        } finally {
            memory.release(in);
        }
    }

    @Test
    void aFilterOfNoWordsAdmitsEveryKey() {
        ByteBuf in = memory.allocate(9);
        in.writeByte(KeyFilter.PROBES).writeInt(0).writeInt(0);
        KeyFilter none = KeyFilter.read(memory, in);
        try {
            assertTrue(none.mayContain(KeyFilter.hash(new byte[] {1})));
            assertFalse(none.tryAdd(1L), "a filter of no words has no room: it is rebuilt from its basement");
        } finally {
            none.release();
            memory.release(in);
        }
    }

    @Test
    void keysHashAsTheFormatDescribes() {
        byte[] key = "betree".getBytes(StandardCharsets.US_ASCII);
        assertEquals(0xdb192026108d56d4L, KeyFilter.hash(key));
        assertEquals(0xefd01f60ba992926L, KeyFilter.hash(new byte[0]));
        ByteBuffer padded = ByteBuffer.allocateDirect(16);
        padded.position(3);
        padded.put(key);
        assertEquals(KeyFilter.hash(key), KeyFilter.hash(padded, 3, key.length));
    }

    /** How many of 100,000 random keys not in {@code present} {@code filter} admits. */
    private static int absentKeysAdmitted(KeyFilter filter, Set<ByteBuffer> present, Random rnd) {
        int admitted = 0;
        int absent = 0;
        while (absent < 100_000) {
            byte[] k = randomKey(rnd);
            if (!present.contains(ByteBuffer.wrap(k))) {
                absent++;
                admitted += filter.mayContain(KeyFilter.hash(k)) ? 1 : 0;
            }
        }
        return admitted;
    }

    /** A basement of {@code n} distinct random keys, recorded in {@code present}. */
    private Basement basementOf(Random rnd, int n, Set<ByteBuffer> present) {
        MessageBuffer messages = new MessageBuffer(memory);
        try {
            while (present.size() < n) {
                byte[] k = randomKey(rnd);
                if (present.add(ByteBuffer.wrap(k))) {
                    messages.append(MessageType.PUT, present.size(), 0L, k, new byte[] {1});
                }
            }
            messages.consolidate();
            Basement basement = Basement.empty(1, memory, new BasementChunks(Compressors.create("none"), new RecentChunkMaps()));
            basement.apply(messages, 0, messages.sortedCount(), Long.MAX_VALUE, UpdateFunctions.NONE);
            return basement;
        } finally {
            messages.release();
        }
    }

    private static byte[] randomKey(Random rnd) {
        byte[] k = new byte[4 + rnd.nextInt(12)];
        rnd.nextBytes(k);
        return k;
    }
}
