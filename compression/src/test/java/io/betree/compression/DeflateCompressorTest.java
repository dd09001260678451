package io.betree.compression;

/** Contract run for deflate at the default level 6. */
class DeflateCompressorTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new DeflateCompressor();
    }

    @Override
    protected boolean checksummed() {
        return true;
    }
}
