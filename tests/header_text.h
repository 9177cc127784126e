/* The text of a public header as its declarations stand for a program:
 * include/webtensor.h is the list of its parts (webtensor/errors.h ...),
 * so a check that reads the header text reads it with each part in place
 * of the #include line that names it, in the order a program sees them. */
#ifndef WT_TESTS_HEADER_TEXT_H
#define WT_TESTS_HEADER_TEXT_H

#include <stddef.h>

/* path's text (malloc'd, NUL-terminated) with every `#include "dir/x.h"`
 * line (a part in a folder beside the header; the parts' own includes of
 * each other, without a folder, stay as they are) replaced by that file's
 * text. NULL when path or a part cannot be read: failed (size bytes)
 * then holds the file that could not. */
char *header_text_read(const char *path, char *failed, size_t size);

#endif
