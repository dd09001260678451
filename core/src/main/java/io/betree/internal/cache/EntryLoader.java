package io.betree.internal.cache;

import io.netty.buffer.ByteBuf;

/** Builds a cache entry from a block's decompressed bytes. */
@FunctionalInterface
public interface EntryLoader<E extends CacheEntry> {
    /**
     * Parses {@code data} (readable bytes of the block; owned by the loader, which must release it
     * or keep it as part of the entry) into an entry for {@code blockNumber}.
     */
    E load(long blockNumber, ByteBuf data);
}
