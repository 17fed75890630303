/**
 * A broker's disk: the watermark past which it refuses appends, and the guard that watches the data directory's
 * volume, refuses appends with DISK_FULL and keeps headroom for what must still be written on a full disk.
 */
package io.sluice.broker.disk;
