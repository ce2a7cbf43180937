"""Stage 1: C preprocessing. `preprocess(text) -> Preprocessed(text, LineMap, ...)`."""

from analyzer.source.linemap import LineMap, SourceFile
from analyzer.source.preprocess import PREDEFINED_MACROS, Comment, Preprocessed, preprocess, preprocess_file

__all__ = ["Comment", "LineMap", "PREDEFINED_MACROS", "Preprocessed", "SourceFile", "preprocess", "preprocess_file"]
