package io.betree.internal.storage;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The current, mutable block translation table: for each logical block number, whether it is
 * allocated and where its latest version lives on disk. Not thread-safe; {@link TableSet} guards it.
 *
 * <p>Numbers are handed out lowest-free-first so that the table stays dense; freeing the highest
 * numbers shrinks it. Positions are kept in two parallel primitive arrays indexed by block number,
 * 12 bytes per number.
 *
 * <p>A number may be freed <em>held</em> ({@link #free(long, boolean)}): it is free in this table but
 * not handed out again until {@link #releaseHeldNumbers}. A checkpoint in progress holds the numbers
 * its table still references, so that a new block never takes the number of one it will persist.
 */
final class TranslationTable {

    /** Offset value of a number that is not allocated. */
    static final long FREE = -1L;

    /** Offset value of an allocated number that has no data yet (offset 0 holds a header slot). */
    static final long UNWRITTEN = 0L;

    private long[] offsets;
    private int[] lengths;
    /** One more than the highest allocated number. */
    private int size;
    /** Numbers below {@code size} that are free. */
    private final BitSet freeNumbers = new BitSet();
    /** Numbers below {@code size} that are free but held: not in {@code freeNumbers}, not handed out. */
    private final BitSet heldNumbers = new BitSet();
    /** No free number is below this. */
    private int lowestFreeHint;
    private long liveBytes;
    private long allocatedCount;

    /** An empty table. */
    TranslationTable() {
        offsets = new long[16];
        lengths = new int[16];
    }

    /** A table holding the same entries as {@code snapshot}. */
    TranslationTable(TableSnapshot snapshot) {
        size = snapshot.size();
        offsets = Arrays.copyOf(snapshot.offsets(), Math.max(16, size));
        lengths = Arrays.copyOf(snapshot.lengths(), Math.max(16, size));
        for (int b = 0; b < size; b++) {
            if (offsets[b] == FREE) {
                freeNumbers.set(b);
            } else {
                allocatedCount++;
                liveBytes += BlockFormat.alignUp(lengths[b]);
            }
        }
    }

    /** Allocates the lowest free block number. */
    long allocate() {
        int b = freeNumbers.nextSetBit(lowestFreeHint);
        if (b >= 0) {
            freeNumbers.clear(b);
            lowestFreeHint = b + 1;
        } else {
            if (size >= BlockFormat.MAX_BLOCK_COUNT) {
                throw new IllegalStateException("no block numbers left: " + size + " in use");
            }
            b = size;
            if (b == offsets.length) {
                int capacity = (int) Math.min(BlockFormat.MAX_BLOCK_COUNT, (long) b + (b >> 1) + 16);
                offsets = Arrays.copyOf(offsets, capacity);
                lengths = Arrays.copyOf(lengths, capacity);
            }
            size++;
            lowestFreeHint = size;
        }
        offsets[b] = UNWRITTEN;
        lengths[b] = 0;
        allocatedCount++;
        return b;
    }

    /** Whether {@code blockNumber} is currently allocated. */
    boolean isAllocated(long blockNumber) {
        return blockNumber >= 0 && blockNumber < size && offsets[(int) blockNumber] != FREE;
    }

    /** File offset of the block's current version: {@link #FREE}, {@link #UNWRITTEN} or a position. */
    long offset(long blockNumber) {
        return blockNumber >= 0 && blockNumber < size ? offsets[(int) blockNumber] : FREE;
    }

    /** On-disk length (header included, padding excluded) of the block's current version, or 0. */
    int length(long blockNumber) {
        return blockNumber >= 0 && blockNumber < size ? lengths[(int) blockNumber] : 0;
    }

    /** Points the allocated {@code blockNumber} at a new version. */
    void set(long blockNumber, long offset, int length) {
        int b = checkAllocated(blockNumber);
        liveBytes += BlockFormat.alignUp(length) - BlockFormat.alignUp(lengths[b]);
        offsets[b] = offset;
        lengths[b] = length;
    }

    /** Releases the allocated {@code blockNumber}; its data must have been dealt with by the caller. */
    void free(long blockNumber) {
        free(blockNumber, false);
    }

    /**
     * Releases the allocated {@code blockNumber}; its data must have been dealt with by the caller.
     * With {@code hold} the number is not handed out again until {@link #releaseHeldNumbers}.
     */
    void free(long blockNumber, boolean hold) {
        int b = checkAllocated(blockNumber);
        liveBytes -= BlockFormat.alignUp(lengths[b]);
        offsets[b] = FREE;
        lengths[b] = 0;
        allocatedCount--;
        if (hold) {
            heldNumbers.set(b);
        } else {
            freeNumbers.set(b);
            lowestFreeHint = Math.min(lowestFreeHint, b);
        }
        shrink();
    }

    /** Makes every held number available again. */
    void releaseHeldNumbers() {
        for (int b = heldNumbers.nextSetBit(0); b >= 0; b = heldNumbers.nextSetBit(b + 1)) {
            freeNumbers.set(b);
            lowestFreeHint = Math.min(lowestFreeHint, b);
        }
        heldNumbers.clear();
        shrink();
    }

    /** Drops free, unheld numbers at the top, so that {@code size} is one past the highest used or held one. */
    private void shrink() {
        while (size > 0 && offsets[size - 1] == FREE && !heldNumbers.get(size - 1)) {
            size--;
            freeNumbers.clear(size);
        }
        lowestFreeHint = Math.min(lowestFreeHint, size);
    }

    /** An immutable copy of the table as it is now (held numbers are free in it). */
    TableSnapshot snapshot() {
        int n = size;
        while (n > 0 && offsets[n - 1] == FREE) {
            n--;
        }
        return new TableSnapshot(Arrays.copyOf(offsets, n), Arrays.copyOf(lengths, n), n, allocatedCount);
    }

    /** Bytes of aligned space the current versions of all blocks occupy. */
    long liveBytes() {
        return liveBytes;
    }

    /** Number of allocated block numbers. */
    long allocatedCount() {
        return allocatedCount;
    }

    private int checkAllocated(long blockNumber) {
        if (!isAllocated(blockNumber)) {
            throw new IllegalArgumentException("block " + blockNumber + " is not allocated");
        }
        return (int) blockNumber;
    }
}
