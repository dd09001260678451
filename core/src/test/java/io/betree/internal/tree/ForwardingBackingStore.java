package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.BackingStore;
import io.netty.buffer.ByteBuf;

/**
 * A {@link BackingStore} that passes every call to another one: tests extend it and override the
 * calls they watch or hold back.
 */
class ForwardingBackingStore implements BackingStore {
    private final BackingStore delegate;

    ForwardingBackingStore(BackingStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public ByteBuf fetch(long blockNumber) {
        return delegate.fetch(blockNumber);
    }

    @Override
    public ByteBuf fetchPrefix(long blockNumber, int bytes) {
        return delegate.fetchPrefix(blockNumber, bytes);
    }

    @Override
    public ByteBuf fetchRange(long blockNumber, int from, int length) {
        return delegate.fetchRange(blockNumber, from, length);
    }

    @Override
    public void writeBack(long blockNumber, ByteBuf image, BlockCompressor codec) {
        delegate.writeBack(blockNumber, image, codec);
    }

    @Override
    public boolean writeCheckpointImage(long blockNumber, ByteBuf image, BlockCompressor codec) {
        return delegate.writeCheckpointImage(blockNumber, image, codec);
    }

    @Override
    public String name() {
        return delegate.name();
    }
}
