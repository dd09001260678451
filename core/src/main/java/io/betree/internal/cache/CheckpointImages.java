package io.betree.internal.cache;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What a fuzzy checkpoint still owes: the entries that were dirty when it began, and the images of
 * those a writer pinned first, copied at that moment. An entry is owed while its
 * {@code checkpointPending} flag is set; whoever clears the flag takes its image (the checkpointer,
 * the evictor writing it back, or a pinner through {@link #captureIfOwed}).
 *
 * <p>Not thread-safe: the owning {@link NodeCache} guards it with its lock.
 */
final class CheckpointImages {
    /**
     * A block's contents as a checkpoint must record them, taken before anyone changed them.
     * {@code earlierWriteInFlight}: a write-back of an earlier state was under way when the image
     * was taken; it may end after the image is installed and replace it as the current version, so
     * the entry must not be marked clean on this image's account.
     */
    record Image(CacheEntry entry, long version, ByteBuf bytes, boolean earlierWriteInFlight) {
    }

    private final ArrayDeque<Image> captured = new ArrayDeque<>();
    private final List<CacheEntry> owed = new ArrayList<>();
    private int cursor;
    private long generation;

    /**
     * Marks every dirty entry of {@code entries} as owed to a checkpoint that begins now, those that
     * ask to be written first ({@link CacheEntry#checkpointFirst}) ahead of the others.
     */
    void begin(Iterable<CacheEntry> entries) {
        generation++;
        owed.clear();
        cursor = 0;
        List<CacheEntry> later = new ArrayList<>();
        for (CacheEntry e : entries) {
            if (e.dirty) {
                e.checkpointPending = true;
                (e.checkpointFirst() ? owed : later).add(e);
            }
        }
        owed.addAll(later);
    }

    /** Copies {@code e}'s image now if the checkpoint still owes it: someone is about to change it. */
    void captureIfOwed(CacheEntry e, Function<CacheEntry, ByteBuf> serializer) {
        if (e.checkpointPending) {
            captured.addLast(new Image(e, e.version, serializer.apply(e), e.writing));
            e.checkpointPending = false;
        }
    }

    /** Keeps an image copied outside the cache lock for the checkpoint in progress. */
    void addCaptured(Image image) {
        captured.addLast(image);
    }

    /** The next image copied by a pinner and not yet written, or null. */
    Image nextCaptured() {
        return captured.pollFirst();
    }

    /** The next owed entry whose image nobody has taken yet, or null when none is left. */
    CacheEntry nextOwed() {
        while (cursor < owed.size()) {
            CacheEntry e = owed.get(cursor++);
            if (e.checkpointPending) {
                return e;
            }
        }
        return null;
    }

    /** Takes the image of owed entry {@code e} now. */
    Image take(CacheEntry e, Function<CacheEntry, ByteBuf> serializer) {
        Image image = new Image(e, e.version, serializer.apply(e), e.writing);
        e.checkpointPending = false;
        return image;
    }

    /**
     * Counts checkpoints begun and abandoned: an image copied outside the lock is kept only if the
     * count is unchanged when it is done, so it never goes to a later checkpoint.
     */
    long generation() {
        return generation;
    }

    /** Looks through the owed entries again: a failed write-back handed one back, marked. */
    void rescan() {
        cursor = 0;
    }

    /** The checkpoint is over: forgets the owed entries. */
    void end() {
        owed.clear();
        cursor = 0;
    }

    /** Drops every mark among {@code entries}, and the images copied so far. */
    void clear(Iterable<CacheEntry> entries, NodeMemory memory) {
        generation++;
        for (CacheEntry e : entries) {
            e.checkpointPending = false;
        }
        releaseCaptured(memory);
        end();
    }

    /** Releases the images copied so far. */
    void releaseCaptured(NodeMemory memory) {
        Image image;
        while ((image = captured.pollFirst()) != null) {
            memory.release(image.bytes());
        }
    }
}
