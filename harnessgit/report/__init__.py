"""`harnessgit report`: the record as pictures, in one self-contained HTML file."""
