package io.betree.internal.storage;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Free-space map of a block file: which aligned extents between {@link BlockFormat#DATA_START} and
 * the allocation end are free. Allocation is first fit in offset order, found through size classes
 * so that it costs a few tree lookups however fragmented the file is (a scan of the whole map was
 * the evictor's main cost in a long insert load); else an append at the end. Released extents
 * coalesce with free neighbours. Not thread-safe; {@link TableSet} guards it.
 *
 * <p>Whether an extent may be released at all (copy-on-write: not while a durable or in-progress
 * checkpoint references it) is the caller's decision; this class only keeps the books and rejects a
 * release that overlaps free space, which would mean the caller freed something twice.
 */
final class ExtentAllocator {
    /** How many extents of the need's own size class {@link #allocate} looks at, lowest first. */
    static final int SCAN_LIMIT = 32;

    /** Free extents: start offset to end offset (exclusive), both aligned, never adjacent. */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    /**
     * Start offsets of the free extents by size class: class {@code c} holds the extents of
     * {@code [2^c, 2^(c+1))} alignment units. Bit {@code c} of {@link #nonEmptyClasses} is set when
     * class {@code c} holds any.
     */
    @SuppressWarnings("unchecked")
    private final TreeSet<Long>[] bySize = new TreeSet[64];
    private long nonEmptyClasses;
    /** End of the allocated space: every extent in use lies below it. Aligned. */
    private long end;
    private long freeBytes;
    /** Number of releases so far: space read while this is unchanged cannot have been reused. */
    private long releaseCount;

    /** An allocator for a file whose only used space is the header area. */
    ExtentAllocator() {
        end = BlockFormat.DATA_START;
    }

    /**
     * Rebuilds the free map of a file whose used space is the header area, the extents of
     * {@code table} and the table region itself; everything else up to the end of the last used
     * extent is free.
     *
     * @throws InvalidDataException if two of the extents overlap
     */
    static ExtentAllocator rebuild(TableSnapshot table, long tableOffset, long tableLength)
            throws InvalidDataException {
        long[] keys = new long[(int) table.entryCount() + 1];
        int n = 0;
        keys[n++] = pack(tableOffset, tableLength);
        for (int b = 0; b < table.size(); b++) {
            long offset = table.offsets()[b];
            if (offset != TranslationTable.FREE && offset != TranslationTable.UNWRITTEN) {
                keys[n++] = pack(offset, table.lengths()[b]);
            }
        }
        Arrays.sort(keys, 0, n);
        ExtentAllocator allocator = new ExtentAllocator();
        for (int i = 0; i < n; i++) {
            long start = (keys[i] >>> 24) * BlockFormat.ALIGNMENT;
            long stop = start + (keys[i] & 0xFFFFFF) * BlockFormat.ALIGNMENT;
            if (start < allocator.end) {
                throw new InvalidDataException("extents overlap at offset " + start);
            }
            if (start > allocator.end) {
                allocator.addFree(allocator.end, start);
                allocator.freeBytes += start - allocator.end;
            }
            allocator.end = stop;
        }
        return allocator;
    }

    /**
     * Packs an aligned extent as (offset / 4096) in the high 40 bits and its length in 4 KiB units in
     * the low 24, so that sorting the keys sorts by offset. This bounds files to 2 PiB and extents to
     * 64 GiB, far beyond any block (64 MiB) or table (20 bytes per block).
     */
    private static long pack(long offset, long length) throws InvalidDataException {
        long units = BlockFormat.alignUp(length) / BlockFormat.ALIGNMENT;
        if (offset >= (1L << 51) || units >= (1L << 24)) {
            throw new InvalidDataException("extent " + offset + "+" + length + " out of range");
        }
        return (offset / BlockFormat.ALIGNMENT) << 24 | units;
    }

    /**
     * Reserves an extent of at least {@code length} bytes and returns its offset: the lowest free
     * extent that fits, except that in the one size class where extents may be too small only the
     * lowest {@link #SCAN_LIMIT} are looked at.
     */
    long allocate(long length) {
        long need = BlockFormat.alignUp(Math.max(length, 1));
        long needUnits = need / BlockFormat.ALIGNMENT;
        int partial = sizeClass(needUnits);
        // Every extent of a class above the need's own fits; take the lowest of their first ones.
        long best = Long.MAX_VALUE;
        long above = partial == 63 ? 0 : nonEmptyClasses & (-1L << (partial + 1));
        while (above != 0) {
            int c = Long.numberOfTrailingZeros(above);
            above &= above - 1;
            best = Math.min(best, bySize[c].first());
        }
        TreeSet<Long> sameClass = bySize[partial];
        if (sameClass != null) {
            Iterator<Long> it = sameClass.iterator();
            for (int i = 0; i < SCAN_LIMIT && it.hasNext(); i++) {
                long start = it.next();
                if (start >= best) {
                    break;
                }
                if (free.get(start) - start >= need) {
                    best = start;
                    break;
                }
            }
        }
        if (best == Long.MAX_VALUE) {
            long start = end;
            end += need;
            return start;
        }
        long stop = removeFree(best);
        if (stop - best > need) {
            addFree(best + need, stop);
        }
        freeBytes -= need;
        return best;
    }

    private static int sizeClass(long units) {
        return 63 - Long.numberOfLeadingZeros(units);
    }

    private void addFree(long start, long stop) {
        free.put(start, stop);
        int c = sizeClass((stop - start) / BlockFormat.ALIGNMENT);
        if (bySize[c] == null) {
            bySize[c] = new TreeSet<>();
        }
        bySize[c].add(start);
        nonEmptyClasses |= 1L << c;
    }

    /** Removes the free extent starting at {@code start}; returns its end. */
    private long removeFree(long start) {
        long stop = free.remove(start);
        int c = sizeClass((stop - start) / BlockFormat.ALIGNMENT);
        bySize[c].remove(start);
        if (bySize[c].isEmpty()) {
            nonEmptyClasses &= ~(1L << c);
        }
        return stop;
    }

    /** Returns the extent at {@code offset} of {@code length} bytes (rounded up to alignment). */
    void release(long offset, long length) {
        long start = offset;
        long stop = offset + BlockFormat.alignUp(Math.max(length, 1));
        if (start < BlockFormat.DATA_START || start % BlockFormat.ALIGNMENT != 0 || stop > end) {
            throw new IllegalStateException("release of " + offset + "+" + length + " outside ["
                    + BlockFormat.DATA_START + ", " + end + ")");
        }
        Map.Entry<Long, Long> before = free.floorEntry(start);
        Map.Entry<Long, Long> after = free.ceilingEntry(start);
        if ((before != null && before.getValue() > start) || (after != null && after.getKey() < stop)) {
            throw new IllegalStateException("double release of " + offset + "+" + length);
        }
        freeBytes += stop - start;
        releaseCount++;
        if (before != null && before.getValue() == start) {
            start = before.getKey();
            removeFree(start);
        }
        if (after != null && after.getKey() == stop) {
            stop = removeFree(after.getKey());
        }
        addFree(start, stop);
    }

    /**
     * Gives up a free extent at the end of the allocated space, if there is one.
     *
     * @return the new allocation end
     */
    long trimTail() {
        Map.Entry<Long, Long> last = free.lastEntry();
        if (last != null && last.getValue() == end) {
            removeFree(last.getKey());
            freeBytes -= end - last.getKey();
            end = last.getKey();
        }
        return end;
    }

    /** End of the allocated space; every extent in use lies below it. */
    long end() {
        return end;
    }

    /** Total bytes of the free extents below {@link #end()}. */
    long freeBytes() {
        return freeBytes;
    }

    /**
     * How many extents were released so far. A reader that saw the same count before and after
     * reading an extent knows that no one can have reused and overwritten it meanwhile.
     */
    long releaseCount() {
        return releaseCount;
    }

    /** Number of free extents (a measure of fragmentation). */
    int freeExtentCount() {
        return free.size();
    }
}
