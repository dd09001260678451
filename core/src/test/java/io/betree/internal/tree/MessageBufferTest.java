package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.memory.NodeMemory;
import java.util.ArrayList;
import java.util.List;
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
