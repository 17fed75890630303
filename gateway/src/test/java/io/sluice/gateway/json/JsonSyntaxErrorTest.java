package io.sluice.gateway.json;

import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
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
