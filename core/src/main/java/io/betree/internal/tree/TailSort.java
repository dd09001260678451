package io.betree.internal.tree;

/**
 * Sorts the offsets of a message buffer's unsorted tail by (key, msn) without boxing: each offset
 * travels with its key's first 16 bytes (two longs), which decide most comparisons, and only
 * offsets whose prefixes tie ask the buffer to compare full keys. A natural merge sort over
 * primitive arrays: the ascending runs already there are found first and merged pairwise, so a
 * tail that arrived in order costs one comparison per message, and one made of two commits'
 * writes in key order (a time series, a stream processor's windows) one merge pass. Sorting boxed offsets with a
 * comparator that always read both keys from the buffer was a sixth of a writer's time in an
 * iiBench load; a bottom-up sort that ignored order already there was most of a time-series
 * writer's sorting.
 */
final class TailSort {
    private TailSort() {
    }

    /**
     * Sorts {@code offsets[0, n)}, {@code prefixes[0, n)} (key bytes 0-7) and {@code prefixes2[0, n)}
     * (bytes 8-15) together into (key, msn) order.
     */
    static void sort(MessageBuffer buffer, int[] offsets, long[] prefixes, long[] prefixes2, int n) {
        if (n < 2) {
            return;
        }
        // bounds[r] is where run r starts; bounds[runs] == n.
        int[] bounds = new int[n + 1];
        int runs = 0;
        for (int k = 1; k < n; k++) {
            if (!inOrder(buffer, offsets, prefixes, prefixes2, k - 1, k)) {
                bounds[++runs] = k;
            }
        }
        bounds[++runs] = n;
        if (runs == 1) {
            return;
        }
        int[] fromOff = offsets;
        long[] fromPre = prefixes;
        long[] fromPre2 = prefixes2;
        int[] toOff = new int[n];
        long[] toPre = new long[n];
        long[] toPre2 = new long[n];
        while (runs > 1) {
            int merged = 0;
            for (int r = 0; r < runs; r += 2) {
                int lo = bounds[r];
                int mid = bounds[Math.min(r + 1, runs)];
                int hi = bounds[Math.min(r + 2, runs)];
                merge(buffer, fromOff, fromPre, fromPre2, lo, mid, hi, toOff, toPre, toPre2);
                bounds[merged++] = lo;
            }
            bounds[merged] = n;
            runs = merged;
            int[] o = fromOff;
            fromOff = toOff;
            toOff = o;
            long[] p = fromPre;
            fromPre = toPre;
            toPre = p;
            long[] p2 = fromPre2;
            fromPre2 = toPre2;
            toPre2 = p2;
        }
        if (fromOff != offsets) {
            System.arraycopy(fromOff, 0, offsets, 0, n);
            System.arraycopy(fromPre, 0, prefixes, 0, n);
            System.arraycopy(fromPre2, 0, prefixes2, 0, n);
        }
    }

    /** Whether entry {@code a} sorts before entry {@code b} (or with it: never, as (key, msn) are distinct). */
    private static boolean inOrder(MessageBuffer buffer, int[] off, long[] pre, long[] pre2, int a, int b) {
        return buffer.compareEntries(pre[a], pre2[a], off[a], pre[b], pre2[b], off[b]) <= 0;
    }

    private static void merge(MessageBuffer buffer, int[] off, long[] pre, long[] pre2, int lo, int mid, int hi,
            int[] outOff, long[] outPre, long[] outPre2) {
        int a = lo;
        int b = mid;
        for (int k = lo; k < hi; k++) {
            boolean takeA;
            if (a >= mid) {
                takeA = false;
            } else if (b >= hi) {
                takeA = true;
            } else {
                takeA = inOrder(buffer, off, pre, pre2, a, b);
            }
            int from = takeA ? a++ : b++;
            outOff[k] = off[from];
            outPre[k] = pre[from];
            outPre2[k] = pre2[from];
        }
    }
}
