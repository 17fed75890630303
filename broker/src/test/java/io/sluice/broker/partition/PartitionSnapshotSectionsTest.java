package io.sluice.broker.partition;

import io.sluice.broker.exporting.UnavailableRange;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class PartitionSnapshotSectionsTest
{
    private static final byte[] IDS = {9, 8, 7, 6, 5};
    private static final byte[] BACKFILLS = {1, 2, 3};

    @Test
    void sectionsWrittenInPlaceEncodeTheSameBytesAsCopiedOnes()
    {
        final Map<String, UnavailableRange> unavailable = Map.of("kafka", new UnavailableRange(3, 5));
        final PartitionSnapshot copied = new PartitionSnapshot(40, 12, Map.of("file", 7L, "kafka", 9L), BACKFILLS, IDS,
            unavailable);
        final PartitionSnapshot inPlace = PartitionSnapshot.write(40, 12, Map.of("kafka", 9L, "file", 7L), unavailable,
            writtenInPlace(IDS), writtenInPlace(BACKFILLS));

        assertThat(inPlace.encode()).isEqualTo(copied.encode());
        assertThat(inPlace).isEqualTo(copied);
    }

    @Test
    void aReadSnapshotsSectionsAreViewsOfTheBytesItWasReadFrom() throws IOException
    {
        final byte[] file = new PartitionSnapshot(40, 12, Map.of("file", 7L), BACKFILLS, IDS).encode();
        final UnsafeBuffer buffer = new UnsafeBuffer(file);

        final PartitionSnapshot read = PartitionSnapshot.decode(buffer, 0, file.length, "file");

        assertThat(read.idempotencySection().byteArray()).isSameAs(file);
        assertThat(read.backfillsSection().byteArray()).isSameAs(file);
        assertThat(read.idempotency()).isEqualTo(IDS);
        assertThat(read.backfills()).isEqualTo(BACKFILLS);
    }

    /** A section its owner writes straight into the snapshot, as the append ids are. */
    private static PartitionSnapshot.Section writtenInPlace(final byte[] content)
    {
        return new PartitionSnapshot.Section()
        {
            @Override
            public int length()
            {
                return content.length;
            }

            @Override
            public void writeTo(final MutableDirectBuffer buffer, final int offset)
            {
                for (int i = 0; i < content.length; i++)
                {
                    buffer.putByte(offset + i, content[i]);
                }
            }
        };
    }
}
