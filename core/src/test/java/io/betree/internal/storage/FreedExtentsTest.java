package io.betree.internal.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Gathered extents are joined where they touch, in any order, and released whole in batches. */
class FreedExtentsTest {
    private static final long A = BlockFormat.ALIGNMENT;

    @Test
    void joinsTouchingExtentsAndReleasesThemInBatches() {
        ExtentAllocator allocator = new ExtentAllocator();
        long[] x = new long[8];
        for (int i = 0; i < x.length; i++) {
            x[i] = allocator.allocate(A);
        }
        FreedExtents freed = new FreedExtents();
        for (int i : new int[] {5, 1, 2, 0, 6}) { // 0-2 and 5-6 touch; 3, 4 and 7 stay allocated
            freed.add(x[i], i == 2 ? 1 : A); // a short length is rounded up to the alignment
        }
        freed.coalesce();
        assertEquals(2, freed.size());
        freed.releaseTo(allocator, 0, 1);
        assertEquals(3 * A, allocator.freeBytes());
        freed.releaseTo(allocator, 1, 2);
        assertEquals(5 * A, allocator.freeBytes());
        assertEquals(2, allocator.freeExtentCount());
        assertEquals(x[0], allocator.allocate(3 * A), "the joined extent is one hole");
    }
}
