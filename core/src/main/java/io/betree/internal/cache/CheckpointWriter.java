package io.betree.internal.cache;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The node cache's part of a fuzzy checkpoint: marks the entries that are dirty when it begins as
 * owed to it, copies an owed entry's image when a pinner gets there first, writes the images the
 * checkpoint owes, and forgets them if it fails. {@link CheckpointImages} holds what is owed and
 * what was copied; this class takes and writes the images.
 *
 * <p>Not thread-safe: guarded by the owning {@link NodeCache}'s lock and its conditions, passed in.
 * Callers hold the lock, except for {@link #writeOwedImages}, which takes it itself and writes
 * images with it released; a method that takes an image with the entry claimed releases the lock
 * meanwhile and holds it again when it returns.
 */
final class CheckpointWriter {
    private final ReentrantLock lock;
    private final Condition roomMade;
    private final Condition claimEnded;
    private final NodeMemory memory;
    private final CachedEntries entries;
    private final EntryImages images;
    private final CheckpointImages checkpoint = new CheckpointImages();
    /** Checkpoint images the evictor is writing or pinners copying now; the checkpoint must not finish before them. */
    private int checkpointWritesInFlight;
    /** Checkpoint images written by {@link #writeOwedImages}; the cache counts them as write-backs. */
    private long writeBacks;

    /**
     * Works under {@code lock}, signalling {@code roomMade} when a checkpoint write in flight ends
     * and {@code claimEnded} when a claim held with the lock released ends.
     */
    CheckpointWriter(ReentrantLock lock, Condition roomMade, Condition claimEnded, NodeMemory memory,
            CachedEntries entries, EntryImages images) {
        this.lock = lock;
        this.roomMade = roomMade;
        this.claimEnded = claimEnded;
        this.memory = memory;
        this.entries = entries;
        this.images = images;
    }

    /** Lock held: copies {@code e}'s image now if the checkpoint still owes it; someone is about to change it. */
    void captureIfPending(CacheEntry e) {
        checkpoint.captureIfOwed(e, images::serializeImage);
    }

    /**
     * Lock held, {@code e} claimed and owed to the checkpoint: copies its image for the checkpoint
     * with the lock released, as the evictor's write-back does (an internal node with full buffers
     * takes tens of milliseconds, which every pin on the locked path would otherwise wait), then
     * ends the claim. Counted as a checkpoint write in flight, so that the checkpoint waits for it.
     */
    void captureOutsideLock(CacheEntry e) {
        long generation = checkpoint.generation();
        checkpointWritesInFlight++;
        try {
            CheckpointImages.Image image = takeImageOutsideLock(e);
            if (checkpoint.generation() == generation) {
                checkpoint.addCaptured(image);
            } else {
                memory.release(image.bytes()); // the checkpoint it was for has been abandoned
            }
        } finally {
            checkpointWritesInFlight--;
            roomMade.signalAll();
        }
    }

    /**
     * Lock held, {@code e} claimed and owed to the checkpoint: takes its image with the lock
     * released and ends the claim, the lock held again. Pinners on the locked path wait meanwhile
     * ({@code NodeCache.pinnableEntry}); if serializing fails, the entry stays owed.
     */
    private CheckpointImages.Image takeImageOutsideLock(CacheEntry e) {
        long version = e.version;
        e.checkpointPending = false;
        e.writing = true;
        boolean taken = false;
        lock.unlock();
        try {
            ByteBuf bytes = images.serializeImage(e);
            taken = true;
            return new CheckpointImages.Image(e, version, bytes, false); // taken only when not being written
        } finally {
            lock.lock();
            e.writing = false;
            e.checkpointPending = !taken;
            e.unclaim();
            claimEnded.signalAll();
            roomMade.signalAll();
        }
    }

    /** Lock held: the evictor begins writing an image owed to the checkpoint, which must wait for it. */
    void imageWriteStarted() {
        checkpointWritesInFlight++;
    }

    /** Lock held: the evictor's write of an image owed to the checkpoint has ended, written or not. */
    void imageWriteEnded() {
        checkpointWritesInFlight--;
    }

    /** Lock held: marks every dirty entry as owed to a checkpoint that begins now. */
    void begin() {
        checkpoint.begin(entries.ring());
    }

    /**
     * Lock not held: writes the image of every entry marked by {@link #begin} while writers go on,
     * as {@link NodeCache#writeCheckpointImages} describes, then ends the checkpoint.
     */
    void writeOwedImages() {
        while (true) {
            CheckpointImages.Image image;
            lock.lock();
            try {
                while (true) {
                    image = checkpoint.nextCaptured();
                    if (image == null) {
                        CacheEntry owed = checkpoint.nextOwed();
                        if (owed != null) {
                            // Pinned (by readers) or being written back: copied under the lock.
                            image = !owed.writing && owed.claim() ? takeImageOutsideLock(owed)
                                    : checkpoint.take(owed, images::serializeImage);
                            break;
                        }
                    }
                    if (image != null || checkpointWritesInFlight == 0) {
                        break;
                    }
                    // The evictor is writing images for this checkpoint: wait, then look again
                    // (a failed write hands its entry back, marked).
                    roomMade.awaitUninterruptibly();
                    checkpoint.rescan();
                }
            } finally {
                lock.unlock();
            }
            if (image == null) {
                break;
            }
            CacheEntry e = image.entry();
            boolean current = images.writeImage(e.blockNumber(), image.bytes(), e.compressor(), true);
            lock.lock();
            try {
                writeBacks++;
                // Clean only if the image is now what a read of the block finds, and no write-back
                // of an earlier state is on its way to replace it, nor was when the image was
                // taken (it may have ended since, after this image became current, and replaced it).
                if (current && !e.writing && !image.earlierWriteInFlight() && e.ringIndex >= 0
                        && entries.get(e.blockNumber()) == e && e.claim()) {
                    if (e.version == image.version()) { // compared under the claim, as in the evictor's writeOut
                        e.dirty = false;
                    }
                    e.unclaim();
                }
            } finally {
                lock.unlock();
            }
        }
        lock.lock();
        try {
            checkpoint.end();
        } finally {
            lock.unlock();
        }
    }

    /** Lock held: forgets a failed checkpoint's marks and copies. */
    void abort() {
        checkpoint.clear(entries.ring(), memory);
    }

    /** Lock held: releases the images copied so far, the cache being released. */
    void releaseCaptured() {
        checkpoint.releaseCaptured(memory);
    }

    /** Lock held: checkpoint images written so far. */
    long writeBacks() {
        return writeBacks;
    }
}
