package io.betree.systest;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/** A clock for row expiry that tests move by hand ({@link io.betree.EnvironmentOptions#clock}). Thread-safe. */
final class ManualClock implements InstantSource {
    private final AtomicLong millis = new AtomicLong(1_700_000_000_000L);

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    /** Moves the clock on by {@code d}. */
    void advance(Duration d) {
        millis.addAndGet(d.toMillis());
    }
}
