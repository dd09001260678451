package io.betree.internal.cache;

import io.betree.compression.BlockCompressor;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;

/**
 * Images of cached entries: an entry serialized into a buffer of the cache's memory, and such an
 * image written to the backing store, as a write-back or for a checkpoint.
 *
 * <p>Thread-safe: it holds only the memory and the store, both thread-safe. An entry is serialized
 * while nobody can change it (claimed, or pinned with the cache's lock held); images are written
 * with the cache's lock released, as {@link BackingStore} requires.
 */
final class EntryImages {
    private final BackingStore store;
    private final NodeMemory memory;

    EntryImages(BackingStore store, NodeMemory memory) {
        this.store = store;
        this.memory = memory;
    }

    /** The on-disk form of {@code e}, in a buffer of the cache's memory that the caller releases or writes. */
    ByteBuf serialize(CacheEntry e) {
        return serialize(e, false);
    }

    /**
     * The checkpoint image of {@code e}: {@link CacheEntry#serializeImage} for an entry kept
     * resident (a root, which nearly every write changes, so its image is soon replaced), so that
     * its pinner, or a pinner waiting for the checkpointer, holds up no writer for a slow form
     * nobody is likely to read. Other entries may stay unchanged, their image then being what
     * later loads read, so they get the on-disk form.
     */
    ByteBuf serializeImage(CacheEntry e) {
        return serialize(e, e.keptResident);
    }

    private ByteBuf serialize(CacheEntry e, boolean quick) {
        ByteBuf out = memory.allocate(e.serializedSizeBound());
        try {
            if (quick) {
                e.serializeImage(out);
            } else {
                e.serialize(out);
            }
            return out;
        } catch (RuntimeException ex) {
            memory.release(out);
            throw ex;
        }
    }

    /**
     * Writes (and releases) an image of block {@code block}, for a checkpoint or as a write-back;
     * returns whether it became the block's current version.
     */
    boolean writeImage(long block, ByteBuf image, BlockCompressor codec, boolean forCheckpoint) {
        try {
            if (forCheckpoint) {
                return store.writeCheckpointImage(block, image, codec);
            }
            store.writeBack(block, image, codec);
            return true;
        } finally {
            memory.release(image);
        }
    }
}
