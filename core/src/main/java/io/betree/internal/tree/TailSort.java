package io.betree.internal.tree;

/**
 * Sorts the offsets of a message buffer's unsorted tail by (key, msn) without boxing: each offset
 * travels with its key's first 8 bytes, which decide most comparisons, and only offsets whose
 * prefixes tie ask the buffer to compare full keys. A bottom-up merge sort over primitive arrays:
 * sorting boxed offsets with a comparator that always read both keys from the buffer was a sixth
 * of a writer's time in an iiBench load.
 */
final class TailSort {
    private TailSort() {
    }

    /** Sorts {@code offsets[0, n)} and {@code prefixes[0, n)} together into (key, msn) order. */
    static void sort(MessageBuffer buffer, int[] offsets, long[] prefixes, int n) {
        if (n < 2) {
            return;
        }
        int[] offsetsTmp = new int[n];
        long[] prefixesTmp = new long[n];
        int[] fromOff = offsets;
        long[] fromPre = prefixes;
        int[] toOff = offsetsTmp;
        long[] toPre = prefixesTmp;
        for (int width = 1; width < n; width <<= 1) {
            for (int lo = 0; lo < n; lo += width << 1) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + (width << 1), n);
                merge(buffer, fromOff, fromPre, lo, mid, hi, toOff, toPre);
            }
            int[] o = fromOff;
            fromOff = toOff;
            toOff = o;
            long[] p = fromPre;
            fromPre = toPre;
            toPre = p;
        }
        if (fromOff != offsets) {
            System.arraycopy(fromOff, 0, offsets, 0, n);
            System.arraycopy(fromPre, 0, prefixes, 0, n);
        }
    }

    private static void merge(MessageBuffer buffer, int[] off, long[] pre, int lo, int mid, int hi, int[] outOff,
            long[] outPre) {
        int a = lo;
        int b = mid;
        for (int k = lo; k < hi; k++) {
            boolean takeA;
            if (a >= mid) {
                takeA = false;
            } else if (b >= hi) {
                takeA = true;
            } else {
                int c = Long.compareUnsigned(pre[a], pre[b]);
                takeA = c < 0 || (c == 0 && buffer.compareMessages(off[a], off[b]) <= 0);
            }
            if (takeA) {
                outOff[k] = off[a];
                outPre[k] = pre[a++];
            } else {
                outOff[k] = off[b];
                outPre[k] = pre[b++];
            }
        }
    }
}
