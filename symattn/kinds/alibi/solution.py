"""placeholder"""
def steps(section, result):
    return []
