package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scan batches with a cap on their entries: read one after another from their resume keys, they
 * give exactly what uncapped batches give, with rows in basements and puts and deletes still
 * pending above them (older snapshots included), and every batch but a range's last holds as many
 * entries as its cap allowed.
 */
class ScanBatchCapTest {
    @TempDir
    Path dir;

    private TreeRig rig;
    private BeTree tree;
    private long msn;
    private final TreeMap<byte[], byte[]> model = new TreeMap<>(Keys::compare);

    @BeforeEach
    void buildTree() throws IOException {
        rig = new TreeRig(dir, 16L << 20, () -> 0);
        tree = rig.tree;
        Random rnd = new Random(7);
        for (int i = 0; i < 30_000; i++) {
            write(rnd);
        }
        while (tree.flushStep()) {
            // most rows down in basements
        }
        for (int i = 0; i < 3_000; i++) {
            write(rnd); // these stay pending above the leaves
        }
    }

    private void write(Random rnd) {
        byte[] key = ByteBuffer.allocate(4).putInt(rnd.nextInt(50_000)).array();
        if (rnd.nextInt(5) == 0) {
            tree.write(MessageType.DELETE, key, null, ++msn);
            model.remove(key);
        } else {
            byte[] value = new byte[1 + rnd.nextInt(40)];
            rnd.nextBytes(value);
            tree.write(MessageType.PUT, key, value, ++msn);
            model.put(key, value);
        }
    }

    @AfterEach
    void release() throws IOException {
        rig.close();
    }

    /** Every entry of {@code [from, to)} at {@code snapshotTs}, batch by batch with {@code cap}. */
    private List<byte[][]> scan(byte[] from, byte[] to, long snapshotTs, int cap) {
        List<byte[][]> out = new ArrayList<>();
        byte[] next = from;
        while (next != null && (to == null || Keys.compare(next, to) < 0)) {
            ScanBatch b = tree.scanBatch(next, to, snapshotTs, null, null, cap);
            assertTrue(b.size() <= cap, "batch of " + b.size() + " past its cap " + cap);
            for (int i = 0; i < b.size(); i++) {
                out.add(new byte[][] {b.key(i), b.value(i)});
            }
            next = b.resumeKey();
        }
        return out;
    }

    private static void assertSame(List<byte[][]> expected, List<byte[][]> actual, String what) {
        assertEquals(expected.size(), actual.size(), what);
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i)[0], actual.get(i)[0], what + ": key " + i);
            assertArrayEquals(expected.get(i)[1], actual.get(i)[1], what + ": value " + i);
        }
    }

    @Test
    void cappedBatchesReadWhatUncappedOnesDo() {
        List<byte[][]> whole = scan(new byte[0], null, msn, Integer.MAX_VALUE);
        List<byte[][]> expected = new ArrayList<>();
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            expected.add(new byte[][] {e.getKey(), e.getValue()});
        }
        assertSame(expected, whole, "uncapped against the model");
        for (int cap : new int[] {1, 2, 7, 64, 1000}) {
            assertSame(whole, scan(new byte[0], null, msn, cap), "cap " + cap);
        }
        byte[] from = ByteBuffer.allocate(4).putInt(12_345).array();
        byte[] to = ByteBuffer.allocate(4).putInt(23_456).array();
        assertSame(scan(from, to, msn, Integer.MAX_VALUE), scan(from, to, msn, 3), "a bounded range");
        long older = msn - 2_000; // a snapshot that sees only some of the pending messages
        assertSame(scan(new byte[0], null, older, Integer.MAX_VALUE), scan(new byte[0], null, older, 5),
                "an older snapshot");
    }

    @Test
    void aBatchTakesItsCapWhenTheBasementHasMore() {
        ScanBatch first = tree.scanBatch(new byte[0], null, msn, null, null, 10);
        assertEquals(10, first.size());
        byte[] last = first.key(9);
        byte[] resume = first.resumeKey();
        assertEquals(last.length + 1, resume.length, "resumes just after the last entry");
        assertTrue(Keys.compare(last, resume) < 0);
        assertThrows(IllegalArgumentException.class, () -> tree.scanBatch(new byte[0], null, msn, null, null, 0));
    }
}
