package io.betree.compression;

/** Contract run for xz at the default preset 6. */
class XzPreset6Test extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new XzCompressor(6);
    }

    @Override
    protected boolean checksummed() {
        return true;
    }
}
