package io.betree.internal.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** First-fit allocation (against a linear model too), coalescing, tail trimming and rebuilding of the free-space map. */
class ExtentAllocatorTest {

    private static final long A = BlockFormat.ALIGNMENT;
    private static final long START = BlockFormat.DATA_START;

    @Test
    void appendsAlignedExtents() {
        ExtentAllocator a = new ExtentAllocator();
        assertEquals(START, a.allocate(1));
        assertEquals(START + A, a.allocate(A));
        assertEquals(START + 2 * A, a.allocate(A + 1));
        assertEquals(START + 4 * A, a.end());
        assertEquals(START + 4 * A, a.allocate(0));
    }

    @Test
    void firstFitCoalescesAndTrims() {
        ExtentAllocator a = new ExtentAllocator();
        long[] x = new long[6];
        for (int i = 0; i < x.length; i++) {
            x[i] = a.allocate(A);
        }
        a.release(x[1], A);
        a.release(x[3], A);
        assertEquals(2, a.freeExtentCount());
        assertEquals(x[1], a.allocate(10), "first fit takes the lowest hole");
        a.release(x[2], A);
        a.release(x[1], A);
        assertEquals(1, a.freeExtentCount(), "x1..x3 coalesced");
        assertEquals(3 * A, a.freeBytes());
        assertEquals(x[1], a.allocate(2 * A));
        assertEquals(A, a.freeBytes());
        a.release(x[5], A);
        a.release(x[4], A);
        assertEquals(x[3], a.trimTail(), "x3..x5 coalesced into a free tail");
        assertEquals(0, a.freeBytes());
        assertEquals(0, a.freeExtentCount());
        assertEquals(x[3], a.trimTail());
    }

    @Test
    void doubleOrStrayReleasesAreBugs() {
        ExtentAllocator a = new ExtentAllocator();
        long x = a.allocate(3 * A);
        a.release(x + A, A);
        assertThrows(IllegalStateException.class, () -> a.release(x + A, A));
        assertThrows(IllegalStateException.class, () -> a.release(x, 2 * A));
        assertThrows(IllegalStateException.class, () -> a.release(x + 3 * A, A));
        assertThrows(IllegalStateException.class, () -> a.release(0, A));
    }

    @Test
    void rebuildFindsTheGapsAndRejectsOverlaps() throws InvalidDataException {
        long[] offsets = {START + 2 * A, TranslationTable.FREE, TranslationTable.UNWRITTEN, START + 5 * A};
        int[] lengths = {100, 0, 0, (int) (2 * A)};
        TableSnapshot table = new TableSnapshot(offsets, lengths, 4, 3);
        ExtentAllocator a = ExtentAllocator.rebuild(table, START + 8 * A, 50);
        assertEquals(START + 9 * A, a.end());
        assertEquals(2 * A + 2 * A + A, a.freeBytes());
        assertEquals(3, a.freeExtentCount());

        TableSnapshot overlapping = new TableSnapshot(new long[] {START, START + A}, new int[] {(int) A + 1, 10}, 2, 2);
        assertThrows(InvalidDataException.class, () -> ExtentAllocator.rebuild(overlapping, START + 4 * A, 50));
    }

    /**
     * Random allocations and releases against a plain first-fit model (a linear scan in offset
     * order). With fewer free extents than the scan limit the two must choose the same offsets.
     */
    @Test
    void matchesALinearFirstFitModel() {
        Random rnd = new Random(42);
        ExtentAllocator a = new ExtentAllocator();
        TreeMap<Long, Long> modelFree = new TreeMap<>();
        long modelEnd = START;
        List<long[]> used = new ArrayList<>();
        for (int op = 0; op < 20_000; op++) {
            if (used.isEmpty() || (rnd.nextInt(100) < 55 && modelFree.size() < ExtentAllocator.SCAN_LIMIT)) {
                long need = (1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 40)) * A;
                long expected = -1;
                for (Map.Entry<Long, Long> e : modelFree.entrySet()) {
                    if (e.getValue() - e.getKey() >= need) {
                        expected = e.getKey();
                        break;
                    }
                }
                if (expected < 0) {
                    expected = modelEnd;
                    modelEnd += need;
                } else {
                    long stop = modelFree.remove(expected);
                    if (stop - expected > need) {
                        modelFree.put(expected + need, stop);
                    }
                }
                assertEquals(expected, a.allocate(need - rnd.nextInt((int) A)), "allocation " + op);
                used.add(new long[] {expected, need});
            } else {
                long[] x = used.remove(rnd.nextInt(used.size()));
                a.release(x[0], x[1]);
                long start = x[0];
                long stop = x[0] + x[1];
                Map.Entry<Long, Long> before = modelFree.floorEntry(start);
                if (before != null && before.getValue() == start) {
                    start = before.getKey();
                    modelFree.remove(start);
                }
                Long after = modelFree.remove(stop);
                if (after != null) {
                    stop = after;
                }
                modelFree.put(start, stop);
            }
            assertEquals(modelFree.size(), a.freeExtentCount());
            assertEquals(modelEnd, a.end());
        }
    }

    /** Many small holes below the end do not stop a large allocation from finding a large hole. */
    @Test
    void findsALargeHoleBehindManySmallOnes() {
        ExtentAllocator a = new ExtentAllocator();
        long[] x = new long[10_001];
        for (int i = 0; i < x.length; i++) {
            x[i] = a.allocate(i == x.length - 1 ? 64 * A : A);
        }
        for (int i = 0; i < x.length - 1; i += 2) {
            a.release(x[i], A);
        }
        a.release(x[x.length - 1], 64 * A);
        assertEquals(x[x.length - 1], a.allocate(50 * A));
        assertEquals(x[0], a.allocate(A));
        long tail = a.end();
        assertEquals(tail, a.allocate(20 * A), "no hole of 20 units is left");
    }
}
