package io.betree.internal.tree;

import java.nio.ByteBuffer;

/**
 * How the index of a {@link MessageBuffer} is made into sorted runs and how two runs become one:
 * index positions sorted in place by (key, msn) (a tail sealed into a run, a loaded buffer that
 * was stored out of order), and the last two runs merged in place, from the earlier run's first
 * message that sorts after the later run's least. The buffer keeps the run boundaries and its
 * scratch room, and decides when runs merge (see its class comment); these are the steps it takes
 * per run, over the index views it passes in.
 *
 * <p>Holds no state. Called only by the buffer's changing methods, so it is as thread-safe as the
 * buffer: not at all, the owning node's pin and the index lock guard it.
 */
final class SortedRuns {
    private SortedRuns() {
    }

    /** Sorts positions {@code [from, to)} of {@code buffer}'s index ({@code index} its view) by (key, msn) in place. */
    static void sortPositions(MessageBuffer buffer, ByteBuffer index, int from, int to) {
        int n = to - from;
        int[] offsets = new int[n];
        long[] prefixes = new long[n];
        long[] prefixes2 = new long[n];
        for (int k = 0; k < n; k++) {
            offsets[k] = buffer.offsetAt(from + k);
            prefixes[k] = buffer.prefixAt(from + k);
            prefixes2[k] = buffer.prefix2At(from + k);
        }
        TailSort.sort(buffer, offsets, prefixes, prefixes2, n);
        for (int k = 0; k < n; k++) {
            MessageBuffer.putEntry(index, (from + k) * MessageBuffer.ENTRY, offsets[k], prefixes[k], prefixes2[k]);
        }
    }

    /**
     * Merges the sorted index positions {@code [a, b)} of {@code buffer} with the sorted positions
     * {@code [b, c)} that follow them, in place in {@code out}, the view of its index: the earlier
     * run is copied to {@code held} (the buffer's scratch view, with room for it) and merged with
     * the later one from there, front to back, so that the output never overtakes the later run's
     * unread entries, and the later run's entries past the earlier run's last stay where they are.
     * Merging both into scratch room and copying the result back moved every entry twice, a fifth
     * of a writer's time in an iiBench load.
     */
    static void mergeInPlace(MessageBuffer buffer, ByteBuffer out, ByteBuffer held, int a, int b, int c) {
        int earlier = (b - a) * MessageBuffer.ENTRY;
        held.put(0, out, a * MessageBuffer.ENTRY, earlier);
        int i = 0;
        int j = b * MessageBuffer.ENTRY;
        int p = a * MessageBuffer.ENTRY;
        int end = c * MessageBuffer.ENTRY;
        long prefix = held.getLong(4);
        long prefix2 = held.getLong(12);
        int offset = held.getInt(0);
        while (i < earlier && j < end) {
            long laterPrefix = out.getLong(j + 4);
            long laterPrefix2 = out.getLong(j + 12);
            int laterOffset = out.getInt(j);
            if (buffer.compareEntries(prefix, prefix2, offset, laterPrefix, laterPrefix2, laterOffset) < 0) {
                MessageBuffer.putEntry(out, p, offset, prefix, prefix2);
                i += MessageBuffer.ENTRY;
                if (i < earlier) {
                    prefix = held.getLong(i + 4);
                    prefix2 = held.getLong(i + 12);
                    offset = held.getInt(i);
                }
            } else {
                MessageBuffer.putEntry(out, p, laterOffset, laterPrefix, laterPrefix2);
                j += MessageBuffer.ENTRY;
            }
            p += MessageBuffer.ENTRY;
        }
        if (i < earlier) {
            out.put(p, held, i, earlier - i);
        }
    }

    /**
     * The first position in the sorted positions {@code [from, to)} of {@code buffer}'s index whose
     * message sorts after the one at {@code to} (the first of the run that follows), or {@code to}.
     * The earlier run's messages before it already sort before the whole later run (its first
     * message is its least), so a merge leaves them where they are; when it is {@code to}, the runs
     * are in order and merging them moves nothing: a primary key written in ascending order, a
     * queue's tail, a time series' newest step.
     */
    static int firstAfter(MessageBuffer buffer, int from, int to) {
        long prefix = buffer.prefixAt(to);
        long prefix2 = buffer.prefix2At(to);
        int offset = buffer.offsetAt(to);
        if (buffer.compareEntries(buffer.prefixAt(to - 1), buffer.prefix2At(to - 1), buffer.offsetAt(to - 1),
                prefix, prefix2, offset) < 0) {
            return to;
        }
        int lo = from;
        int hi = to - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (buffer.compareEntries(buffer.prefixAt(mid), buffer.prefix2At(mid), buffer.offsetAt(mid),
                    prefix, prefix2, offset) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
