package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;

/** What the tree tests that compare a tree with a model share: keys, values, and a scan against the model. */
final class TreeModel {
    private TreeModel() {
    }

    /**
     * Scans {@code tree} from {@code from} to the end at {@code snapshotTs}, in batches of 50, and
     * checks it returns exactly the model's entries from there.
     */
    static void checkScan(BeTree tree, NavigableMap<byte[], byte[]> model, long snapshotTs, byte[] from, String what) {
        List<byte[][]> actual = new ArrayList<>();
        byte[] next = from;
        while (next != null) {
            ScanBatch b = tree.scanBatch(next, null, snapshotTs, null, null, 50);
            for (int i = 0; i < b.size(); i++) {
                actual.add(new byte[][] {b.key(i), b.value(i)});
            }
            next = b.resumeKey();
        }
        List<Map.Entry<byte[], byte[]>> expected = new ArrayList<>(model.tailMap(from, true).entrySet());
        assertEquals(expected.size(), actual.size(), what + ": entries");
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i).getKey(), actual.get(i)[0], what + ": key " + i);
            assertArrayEquals(expected.get(i).getValue(), actual.get(i)[1], what + ": value " + i);
        }
    }

    /** Key number {@code k}: "k" and six digits. */
    static byte[] key(int k) {
        return String.format("k%06d", k).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A random value of 1 to {@code maxLength} bytes whose first byte is not zero (which deletes, for
     * {@link BasementApplyTest#APPEND}).
     */
    static byte[] value(Random rnd, int maxLength) {
        byte[] v = new byte[1 + rnd.nextInt(maxLength)];
        rnd.nextBytes(v);
        v[0] = (byte) (1 + rnd.nextInt(100));
        return v;
    }
}
