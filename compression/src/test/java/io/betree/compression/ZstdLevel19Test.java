package io.betree.compression;

/** Contract run for zstd at level 19. */
class ZstdLevel19Test extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new ZstdCompressor(19);
    }
}
