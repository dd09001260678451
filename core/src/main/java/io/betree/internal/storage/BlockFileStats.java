package io.betree.internal.storage;

/**
 * Space accounting of a {@link BlockFile} at one moment.
 *
 * @param fileSize bytes the file occupies (allocation end; the headers included)
 * @param liveBytes aligned bytes held by the current version of every block
 * @param freeBytes bytes of free extents below the end of the file, reusable now
 * @param pinnedBytes bytes neither live nor free: versions and the translation table that the last
 *     durable checkpoint (or one in progress) still references, plus writes in flight; they become
 *     free after the next checkpoint
 * @param freeExtents number of free extents (fragmentation)
 * @param blockCount allocated block numbers
 * @param checkpointSequence sequence number of the last durable checkpoint
 */
public record BlockFileStats(long fileSize, long liveBytes, long freeBytes, long pinnedBytes, int freeExtents,
        long blockCount, long checkpointSequence) {
}
