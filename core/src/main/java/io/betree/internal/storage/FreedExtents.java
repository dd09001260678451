package io.betree.internal.storage;

import java.util.Arrays;

/**
 * Extents a completed checkpoint gives back to the {@link ExtentAllocator}, gathered first and
 * released later in batches. Sorted and joined where they touch before release: old versions are
 * often written side by side, and each release is a few tree-map operations.
 *
 * <p>Not thread-safe.
 */
final class FreedExtents {
    /** Start offsets, then (after {@link #coalesce}) in ascending order. */
    private long[] starts = new long[64];
    /** Exclusive ends, aligned; parallel to {@code starts}. */
    private long[] stops = new long[64];
    private int size;

    /** Adds the extent at {@code offset} of {@code length} bytes (rounded up to the alignment). */
    void add(long offset, long length) {
        if (size == starts.length) {
            starts = Arrays.copyOf(starts, size * 2);
            stops = Arrays.copyOf(stops, size * 2);
        }
        starts[size] = offset;
        stops[size] = offset + BlockFormat.alignUp(Math.max(length, 1));
        size++;
    }

    /** Sorts the extents by offset and joins those that touch. */
    void coalesce() {
        long[][] pairs = new long[size][];
        for (int i = 0; i < size; i++) {
            pairs[i] = new long[] {starts[i], stops[i]};
        }
        Arrays.sort(pairs, (a, b) -> Long.compare(a[0], b[0]));
        int n = 0;
        for (long[] p : pairs) {
            if (n > 0 && stops[n - 1] == p[0]) {
                stops[n - 1] = p[1];
            } else {
                starts[n] = p[0];
                stops[n] = p[1];
                n++;
            }
        }
        size = n;
    }

    /** How many extents there are (after {@link #coalesce}, joined ones count once). */
    int size() {
        return size;
    }

    /** Releases extents {@code from} (inclusive) to {@code to} (exclusive); the caller holds the allocator's lock. */
    void releaseTo(ExtentAllocator allocator, int from, int to) {
        for (int i = from; i < to; i++) {
            allocator.release(starts[i], stops[i] - starts[i]);
        }
    }
}
