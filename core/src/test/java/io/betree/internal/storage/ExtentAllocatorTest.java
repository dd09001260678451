package io.betree.internal.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** First-fit allocation, coalescing, tail trimming and rebuilding of the free-space map. */
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
}
