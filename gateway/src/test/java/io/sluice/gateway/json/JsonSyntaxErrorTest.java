package io.sluice.gateway.json;

import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class JsonSyntaxErrorTest
{
    private final JsonMapper mapper = JsonMapper.builder().build();

    @Test
    void truncatedBodyNamesWhatIsMissingAndWhereWithoutTheParsersSourceDump()
    {
        final String message = describe("{\"targets\": [");

        assertThat(message)
            .startsWith("Unexpected end-of-input")
            .contains("close marker for Array")
            .endsWith("(line 1, column 14)")
            .doesNotContain("Source:", "REDACTED", "#UNKNOWN", "start marker at");
    }

    @Test
    void badTokenNamesTheTokenAndItsLine()
    {
        final String message = describe("{\n  \"payload\": tru\n}");

        assertThat(message).contains("Unrecognized token 'tru'").contains("(line 2,").doesNotContain("Source:");
    }

    record Target(int brokerId, int partitionId)
    {
    }

    record Targets(List<Target> targets)
    {
    }

    @Test
    void aValueOfTheWrongKindNamesTheFieldAndTheKindItTakesWithoutJacksonsJavaTypes()
    {
        final Throwable failure = catchThrowable(() ->
            mapper.readValue("{\"targets\": [{\"brokerId\": \"one\", \"partitionId\": 2}]}", Targets.class));

        final String message = JsonSyntaxError.describe(failure);

        assertThat(message).isEqualTo("field 'targets[0].brokerId' must be a whole number");
        assertThat(message).doesNotContain("`", "io.sluice", "reference chain", "Cannot deserialize");
    }

    @Test
    void anythingElseKeepsItsOwnMessage()
    {
        assertThat(JsonSyntaxError.describe(new IllegalStateException("stream closed"))).isEqualTo("stream closed");
    }

    private String describe(final String json)
    {
        final JacksonException e = catchThrowableOfType(JacksonException.class, () -> mapper.readTree(json));
        return JsonSyntaxError.describe(e);
    }
}
