package dev.cairn.master.planted;

/**
 * A deliberate violation of the Env rule, compiled only as a test fixture: the build-check proof feeds
 * this class to the same checker and signatures the build uses and expects it to be refused.
 */
public final class PlantedClockUse {
    private PlantedClockUse() {}

    public static long leaseExpiry() {
        return System.currentTimeMillis() + 5_000;
    }
}
