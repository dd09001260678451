package io.betree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.betree.internal.tree.Keys;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** A transaction's write set against a linked hash map and a sorted map as its model. */
class WriteSetTest {

    @Test
    void matchesAModelThroughGrowthOverwritesAndDeletes() {
        Random random = new Random(42);
        for (int round = 0; round < 20; round++) {
            WriteSet set = new WriteSet();
            Map<ByteBuffer, byte[]> model = new LinkedHashMap<>();
            int keySpace = 1 + random.nextInt(5_000);
            int writes = random.nextInt(10_000);
            boolean scanEarly = random.nextBoolean();
            for (int i = 0; i < writes; i++) {
                byte[] key = ByteBuffer.allocate(4 + random.nextInt(3)).putInt(random.nextInt(keySpace)).array();
                byte[] value = random.nextInt(5) == 0 ? Transaction.DELETED : ("v" + i).getBytes();
                set.put(key.clone(), value);
                model.put(ByteBuffer.wrap(key), value);
                if (scanEarly && i == writes / 2) {
                    set.sorted(); // from here on, later writes keep the sorted view up to date
                }
                if (i % 97 == 0) {
                    byte[] probe = ByteBuffer.allocate(4).putInt(random.nextInt(2 * keySpace)).array();
                    assertSame(model.get(ByteBuffer.wrap(probe)), set.get(probe));
                }
            }
            assertEquals(model.size(), set.size());
            List<byte[]> keysInOrder = new ArrayList<>();
            set.forEach((k, v) -> {
                keysInOrder.add(k);
                assertSame(model.get(ByteBuffer.wrap(k)), v);
            });
            List<byte[]> expectedOrder = new ArrayList<>();
            model.keySet().forEach(b -> expectedOrder.add(b.array()));
            assertEquals(expectedOrder.size(), keysInOrder.size());
            for (int i = 0; i < keysInOrder.size(); i++) {
                assertArrayEquals(expectedOrder.get(i), keysInOrder.get(i), "first-write order at " + i);
            }
            TreeMap<byte[], byte[]> sortedModel = new TreeMap<>(Keys::compare);
            model.forEach((k, v) -> sortedModel.put(k.array(), v));
            NavigableMap<byte[], byte[]> sorted = set.sorted();
            assertEquals(sortedModel.size(), sorted.size());
            var expected = sortedModel.entrySet().iterator();
            for (Map.Entry<byte[], byte[]> e : sorted.entrySet()) {
                Map.Entry<byte[], byte[]> x = expected.next();
                assertArrayEquals(x.getKey(), e.getKey());
                assertSame(x.getValue(), e.getValue());
            }
        }
    }

    @Test
    void keysWithOneHashStayApart() {
        // Arrays.hashCode gives {0, 31} and {1, 0} the same hash; so do their extensions below.
        WriteSet set = new WriteSet();
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            keys.add(new byte[] {0, 31, (byte) i});
            keys.add(new byte[] {1, 0, (byte) i});
        }
        for (byte[] k : keys) {
            set.put(k.clone(), k.clone());
        }
        set.put(new byte[] {1, 0, 7}, Transaction.DELETED);
        assertEquals(keys.size(), set.size());
        for (byte[] k : keys) {
            byte[] expected = Arrays.equals(k, new byte[] {1, 0, 7}) ? Transaction.DELETED : k;
            assertArrayEquals(expected, set.get(k));
        }
        assertNull(set.get(new byte[] {0, 31}));
        assertNull(set.get(new byte[0]));
    }

    @Test
    void emptySetHasNothing() {
        WriteSet set = new WriteSet();
        assertEquals(0, set.size());
        assertNull(set.get(new byte[] {1}));
        assertEquals(0, set.sorted().size());
        set.forEach((k, v) -> {
            throw new AssertionError("no writes expected");
        });
    }
}
